import { z } from "zod";

/** Ids are opaque strings with a readable prefix (`sesn_…`, `sevt_…`); only their presence is checked. */
export const Id = z.string().min(1).max(128);
export type Id = z.infer<typeof Id>;

export const Timestamp = z.iso.datetime({ offset: true });
export type Timestamp = z.infer<typeof Timestamp>;

export const Metadata = z.record(z.string().max(64), z.string().max(512));
export type Metadata = z.infer<typeof Metadata>;

export const ID_PREFIX = {
  tenant: "tnt",
  apiKey: "key",
  agent: "agent",
  environment: "env",
  session: "sesn",
  event: "sevt",
  wake: "wake",
  toolCall: "tcall",
  toolBatch: "tbatch",
  reminder: "rmd",
  scheduledTask: "stask",
  memoryVersion: "memv",
  substrateVersion: "subv",
  outcome: "outc",
  agentCode: "acode",
} as const;
export type IdKind = keyof typeof ID_PREFIX;
