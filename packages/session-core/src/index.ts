export { INTERRUPTED_BEFORE_RUN, unrunCallIds } from "./interrupt";
export { initialSessionState, type ReducibleEvent, reduceSessionState, type SessionInit } from "./reducer";
export { budgetExhausted, totalTokens, wakeReason } from "./wake-decision";
