import { parseArgs } from "node:util";
import { createDb, isConnectionFailure, isInsufficientPrivilege } from "@wakeloop/db";
import { loadOwnerDatabaseUrl } from "../config";
import { createTenant } from "../tenants/create-tenant";

// npm run tenant -- --name acme [--database-url postgres://…] [--json]
// Creates a tenant and prints its first owner key. The key is shown this once: only its hash is stored.

const USAGE = `usage: npm run tenant -- --name <name> [--database-url <postgres url>] [--json]

Creates a tenant and prints its first owner API key (shown this once: only its hash is stored).

  --name <name>           the tenant's name (required)
  --database-url <url>    the migration owner's Postgres url; default: OWNER_DATABASE_URL, else
                          postgres://postgres@127.0.0.1:5432/wakeloop (what infra/up.sh migrates)
  --json                  print {"tenant": …, "owner_key": …} as one JSON line
  -h, --help              this text

More keys (owner or member) are made with that key: POST /v1/api_keys {"name": …, "role": "member"}.
`;

function fail(message: string): never {
  process.stderr.write(`create-tenant: ${message}\n\n${USAGE}`);
  process.exit(2);
}

function readArgs() {
  try {
    return parseArgs({
      options: {
        name: { type: "string" },
        "database-url": { type: "string" },
        json: { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
      },
    }).values;
  } catch (error) {
    // parseArgs names the unknown option or the missing value; a stack trace would not help.
    return fail(error instanceof Error ? error.message : String(error));
  }
}

const values = readArgs();
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const name = values.name?.trim();
if (name === undefined || name === "") fail("--name is required");

let url: string;
try {
  url = values["database-url"] ?? loadOwnerDatabaseUrl();
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
}
const db = createDb({ url, max: 1 });
try {
  const { tenant, ownerKey } = await createTenant(db, { name }).catch((error: unknown) => {
    // Services' role (wakeloop_app) may not create tenants: only the owner that migrated may.
    if (isInsufficientPrivilege(error)) {
      fail("this database role may not create tenants: pass the migration owner's url with --database-url");
    }
    if (isConnectionFailure(error)) {
      fail(
        `cannot reach Postgres at ${new URL(url).host} (is it running? bash infra/ensure-services.sh starts it)`,
      );
    }
    throw error;
  });
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ tenant, owner_key: ownerKey })}\n`);
  } else {
    process.stdout.write(
      `tenant    ${tenant.id} (${tenant.name})\n` +
        `owner key ${ownerKey.key}\n` +
        "Store the key now: it is not shown again and cannot be recovered.\n",
    );
  }
} finally {
  await db.destroy();
}
