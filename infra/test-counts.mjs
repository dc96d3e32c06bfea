// Prints vitest's JSON report as the one closing line CI reads: "N passed, N failed".
import { existsSync, readFileSync } from "node:fs";

const file = process.argv[2] ?? ".vitest-results.json";
if (!existsSync(file)) {
  console.log(`no test report at ${file}: the test task did not run`);
  console.log("0 passed, 1 failed");
  process.exit(1);
}
const report = JSON.parse(readFileSync(file, "utf8"));
// A file that failed outside its tests (an import error, a failing beforeAll: its tests are then
// reported as skipped) counts as one failure, so the line never reads "0 failed" for a red run.
const failedSuites = report.testResults.filter(
  (suite) => suite.status === "failed" && !suite.assertionResults.some((test) => test.status === "failed"),
);
for (const suite of failedSuites)
  console.log(`suite failed before its tests ran: ${suite.name}\n${suite.message}`);
const failed = report.numFailedTests + failedSuites.length;
const skipped = report.numPendingTests + report.numTodoTests;
console.log(`${report.numPassedTests} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ""}`);
process.exit(failed > 0 || report.numTotalTests === 0 ? 1 : 0);
