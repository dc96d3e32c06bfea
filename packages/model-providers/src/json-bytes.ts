// Request bodies assembled from JSON bytes encoded once and copied into each request.

export const COMMA = Buffer.from(",");

/** Appends `items` to `parts` as the elements of a JSON array (the brackets are the caller's). */
export function pushJsonElements(parts: Buffer[], items: Iterable<Buffer>): void {
  let first = true;
  for (const item of items) {
    if (!first) parts.push(COMMA);
    parts.push(item);
    first = false;
  }
}
