import { randomBytes } from "node:crypto";
import { createTestDatabase, type TestDatabase } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CredentialCipher } from "./credential-cipher";
import {
  deleteProviderCredential,
  listProviderCredentials,
  putProviderCredential,
  readProviderCredential,
} from "./credential-store";

let database: TestDatabase;
const cipher = new CredentialCipher([{ id: "k1", key: randomBytes(32) }]);

beforeAll(async () => {
  database = await createTestDatabase();
  await database.db
    .insertInto("tenants")
    .values([
      { id: "tnt_a", name: "a" },
      { id: "tnt_b", name: "b" },
    ])
    .execute();
});
afterAll(async () => {
  await database?.drop();
});

describe("provider credential store", () => {
  it("stores sealed, reads back in clear for its tenant only, and lists metadata only", async () => {
    const { db } = database;
    const stored = await putProviderCredential(
      db,
      cipher,
      { tenantId: "tnt_a", provider: "openai", apiKey: "sk-tenant-a" },
      new Date("2026-01-01T00:00:00Z"),
    );
    expect(stored).toEqual({
      provider: "openai",
      created_at: "2026-01-01T00:00:00.000Z",
      updated_at: "2026-01-01T00:00:00.000Z",
    });
    const row = await db.selectFrom("provider_credentials").selectAll().executeTakeFirstOrThrow();
    expect(row.sealed.includes(Buffer.from("sk-tenant-a"))).toBe(false);

    expect(await readProviderCredential(db, cipher, "tnt_a", "openai")).toBe("sk-tenant-a");
    expect(await readProviderCredential(db, cipher, "tnt_b", "openai")).toBeUndefined();
    expect(await readProviderCredential(db, cipher, "tnt_a", "anthropic")).toBeUndefined();
    expect(await listProviderCredentials(db, "tnt_a")).toEqual([stored]);
    expect(await listProviderCredentials(db, "tnt_b")).toEqual([]);
  });

  it("replaces a key in place and keeps its creation time", async () => {
    const { db } = database;
    const first = await putProviderCredential(
      db,
      cipher,
      { tenantId: "tnt_b", provider: "anthropic", apiKey: "one" },
      new Date("2026-01-01T00:00:00Z"),
    );
    const second = await putProviderCredential(
      db,
      cipher,
      { tenantId: "tnt_b", provider: "anthropic", apiKey: "two" },
      new Date("2026-02-01T00:00:00Z"),
    );
    expect(second).toEqual({ ...first, updated_at: "2026-02-01T00:00:00.000Z" });
    expect(await readProviderCredential(db, cipher, "tnt_b", "anthropic")).toBe("two");
  });

  it("does not open a sealed value copied into another tenant's row", async () => {
    const { db } = database;
    await putProviderCredential(
      db,
      cipher,
      { tenantId: "tnt_a", provider: "anthropic", apiKey: "a-key" },
      new Date(),
    );
    const theirs = await db
      .selectFrom("provider_credentials")
      .selectAll()
      .where("tenant_id", "=", "tnt_a")
      .where("provider", "=", "anthropic")
      .executeTakeFirstOrThrow();
    await db
      .updateTable("provider_credentials")
      .set({ sealed: theirs.sealed, key_id: theirs.key_id })
      .where("tenant_id", "=", "tnt_b")
      .where("provider", "=", "anthropic")
      .execute();
    await expect(readProviderCredential(db, cipher, "tnt_b", "anthropic")).rejects.toMatchObject({
      code: "provider_credential_unreadable",
    });
  });

  it("deletes, and a second delete is a not-found", async () => {
    const { db } = database;
    await putProviderCredential(
      db,
      cipher,
      { tenantId: "tnt_a", provider: "openai_compatible", apiKey: "x" },
      new Date(),
    );
    expect((await deleteProviderCredential(db, "tnt_a", "openai_compatible")).provider).toBe(
      "openai_compatible",
    );
    await expect(deleteProviderCredential(db, "tnt_a", "openai_compatible")).rejects.toMatchObject({
      code: "provider_credential_not_found",
    });
  });
});
