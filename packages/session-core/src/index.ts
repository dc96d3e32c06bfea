export { initialSessionState, type ReducibleEvent, reduceSessionState, type SessionInit } from "./reducer";
export { budgetExhausted, totalTokens, wakeReason } from "./wake-decision";
