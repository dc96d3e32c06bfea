export { childEnding } from "./child-ending";
export { type ChildRunProgress, type ChildRunStatus, childRunStatus } from "./child-run";
export { INTERRUPTED_BEFORE_RUN, unrunCallIds } from "./interrupt";
export { chosenModel, type ModelChoice, modelOverride } from "./model-override";
export {
  type GradedAttempt,
  nextOutcomeStep,
  type OutcomeTrend,
  outcomeMessage,
  outcomeTitle,
  outcomeTrend,
  promotionReady,
  TREND_TOLERANCE,
} from "./outcome";
export { initialSessionState, type ReducibleEvent, reduceSessionState, type SessionInit } from "./reducer";
export {
  decideFiring,
  type FiringDecision,
  isKnownTimeZone,
  nextOccurrence,
  parseOneShot,
  parseSchedule,
  type ScheduleInput,
  type ScheduleSpec,
} from "./schedule";
export { budgetExhausted, chargedTokens, totalTokens, wakeReason } from "./wake-decision";
