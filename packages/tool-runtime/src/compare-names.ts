/** Code-point order: unlike localeCompare it is the same on every machine and ICU version. */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
