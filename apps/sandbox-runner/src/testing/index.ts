export { RunnerFixture, silent, testEnvironment, testRunnerSettings } from "./docker-fixture";
export { SessionDriver, textOf } from "./session-driver";
