export {
  DEFAULT_POLL_CALLS,
  finishedCall,
  type LoopCall,
  type LoopCallRecord,
  loopCall,
  loopCallRecord,
  type PollCallRule,
} from "./call-record";
export type { LoopDetector } from "./detectors";
export { checkLoop, type LoopVerdict } from "./verdict";
export { isVolatileKey, stripVolatile, VOLATILE_KEYS } from "./volatile";
