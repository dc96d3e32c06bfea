// Environment variables that decide which program runs, which code a program loads at start, or which
// configuration file it reads (a config file can name a program: ripgrep's `--pre`, git's
// `core.pager`, npm's `script-shell`). Setting one is as strong as running a command, so it goes
// through the exec policy like one. The list errs wide: a harmless name here only costs an approval.

const EXACT = new Set([
  "ENV",
  "HOME",
  "IFS",
  "CDPATH",
  "GLOBIGNORE",
  "SHELLOPTS",
  "PROMPT_COMMAND",
  "VISUAL",
  "BROWSER",
  "NLSPATH",
  "HOSTALIASES",
  "TERMINFO",
  "TMPDIR",
]);

const PATTERNS = [
  /^(LD|DYLD|GIT|XDG|NODE|NPM|YARN|PNPM|PIP|GEM|BUNDLE|CARGO|RUST|GO|SSH|GPG|CURL|WGET|JAVA|JDK)_/i,
  /^(BASH|PYTHON|PERL|RUBY|LESS|GCONV|GNUPG)/i, // BASH_ENV, BASHOPTS, PYTHONSTARTUP, PERL5LIB, LESSOPEN
  /PATH$/i, // PATH, LD_LIBRARY_PATH, NODE_PATH, PYTHONPATH, RIPGREP_CONFIG_PATH, GCONV_PATH, …
  /CONFIG/i, // *_CONFIG*, npm_config_*
  /OPT(ION)?S$/i, // NODE_OPTIONS, JAVA_TOOL_OPTIONS, PERL5OPT, RUBYOPT, MAVEN_OPTS
  /FLAGS$/i, // GOFLAGS (-toolexec), CFLAGS
  /HOME$/i, // CURL_HOME, XDG_CONFIG_HOME, CARGO_HOME: where config is read from
  /RC$/i, // INPUTRC, NPMRC, CURLRC
  /(PAGER|EDITOR|ASKPASS|SHELL|STARTUP|PROMPT|PRELOAD|PLUGINS?|HOOKS?)$/i,
  /^PS\d$/,
];

export function isSensitiveEnvName(name: string): boolean {
  return EXACT.has(name.toUpperCase()) || PATTERNS.some((pattern) => pattern.test(name));
}

/** The variables of `env` the exec policy must see, by name. */
export function sensitiveEnvNames(env: Readonly<Record<string, string>>): string[] {
  return Object.keys(env).filter(isSensitiveEnvName);
}
