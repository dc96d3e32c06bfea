import { z } from "zod";
import * as api from "./api";
import { ApiError } from "./errors";
import { SessionEvent, UserEventInput } from "./events";
import { CreateScheduledTaskRequest, ScheduledTask } from "./schedules";

/** The API bodies by name, for JSON Schema export and the OpenAPI document. */
export const apiSchemas = {
  CreateAgentRequest: api.CreateAgentRequest,
  UpdateAgentRequest: api.UpdateAgentRequest,
  Agent: api.Agent,
  CreateEnvironmentRequest: api.CreateEnvironmentRequest,
  UpdateEnvironmentRequest: api.UpdateEnvironmentRequest,
  Environment: api.Environment,
  CreateSessionRequest: api.CreateSessionRequest,
  UpdateSessionRequest: api.UpdateSessionRequest,
  Session: api.Session,
  PostEventsRequest: api.PostEventsRequest,
  PostEventsResponse: api.PostEventsResponse,
  ListEventsResponse: api.ListEventsResponse,
  PendingResponse: api.PendingResponse,
  UserEventInput,
  SessionEvent,
  ApiError,
  CreateScheduledTaskRequest,
  ScheduledTask,
} as const;
export type ApiSchemaName = keyof typeof apiSchemas;

/** JSON Schema (draft 2020-12) of one API body; request bodies describe what a client sends. */
export function apiJsonSchema(name: ApiSchemaName): Record<string, unknown> {
  const io = name.endsWith("Request") || name === "UserEventInput" ? "input" : "output";
  return z.toJSONSchema(apiSchemas[name], { io, unrepresentable: "any" }) as Record<string, unknown>;
}
