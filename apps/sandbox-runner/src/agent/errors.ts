/** An error with a stable code that the runner turns into a tool error for the model. */
export class AgentError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}
