import { parseArgs } from "node:util";
import { createDb, isInsufficientPrivilege } from "@wakeloop/db";
import { loadDatabaseUrl } from "../config";
import { createTenant } from "../tenants/create-tenant";

// npx tsx apps/gateway/src/cli/create-tenant.ts --name acme [--database-url postgres://…] [--json]
// Creates a tenant and prints its first owner key. The key is shown this once: only its hash is stored.

const USAGE = "usage: create-tenant --name <name> [--database-url <postgres url>] [--json]\n";

const { values } = parseArgs({
  options: {
    name: { type: "string" },
    "database-url": { type: "string" },
    json: { type: "boolean", default: false },
  },
});
const name = values.name?.trim();
if (name === undefined || name === "") {
  process.stderr.write(USAGE);
  process.exit(2);
}

const db = createDb({ url: values["database-url"] ?? loadDatabaseUrl(), max: 1 });
try {
  const { tenant, ownerKey } = await createTenant(db, { name }).catch((error: unknown) => {
    // Services' role (wakeloop_app) may not create tenants: only the owner that migrated may.
    if (isInsufficientPrivilege(error)) {
      process.stderr.write(
        "create-tenant needs the migration owner's url: pass --database-url <owner url>\n",
      );
      process.exit(2);
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
