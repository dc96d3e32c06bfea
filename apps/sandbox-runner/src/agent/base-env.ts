// The environment every command starts from. Built here rather than inherited so that the agent's
// own settings (WL_AGENT_CONFIG) never leak into the commands the model runs.
export const BASE_ENV: Readonly<Record<string, string>> = Object.freeze({
  PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
  HOME: process.env.HOME || "/home/sandbox",
  USER: "sandbox",
  SHELL: "/bin/bash",
  LANG: "C.UTF-8",
  TERM: "dumb",
  PAGER: "cat",
  GIT_PAGER: "cat",
});
