/** Settings named like this hold a credential, by the convention every app's config.ts follows. */
const SECRET_NAME = /(?:_KEY|_SECRET|_PASSWORD|_TOKEN|_SEED|_CREDENTIALS?)$/;

/**
 * The secret values in a parsed configuration: settings named as credentials, and the password part of
 * every URL setting (`postgres://user:password@…`). The logger and the span exporters scrub these
 * values wherever they would appear, so a secret echoed inside an error message is not written either.
 */
export function configSecrets(config: Readonly<Record<string, unknown>>): string[] {
  const secrets: string[] = [];
  for (const [name, value] of Object.entries(config)) {
    for (const text of Array.isArray(value) ? value : [value]) {
      if (typeof text !== "string") continue;
      if (SECRET_NAME.test(name)) secrets.push(text);
      const password = urlPassword(text);
      if (password !== undefined) secrets.push(password);
    }
  }
  return secrets;
}

function urlPassword(text: string): string | undefined {
  if (!text.includes("://")) return undefined;
  try {
    const password = decodeURIComponent(new URL(text).password);
    return password === "" ? undefined : password;
  } catch {
    return undefined;
  }
}
