/** An error with a stable code that the runner turns into a tool error for the model. */
class AgentError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

module.exports = { AgentError };
