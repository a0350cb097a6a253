/**
 * Where the provider says what it is waiting for: jobs started and their progress, rate-limit pauses, retries and
 * their reasons. The dynamic-provider host has no engine connection, so the default writes lines to stderr (the
 * engine shows a dynamic provider's stderr); a provider plugin can route the same lines to the engine's log.
 * The engine shows those stderr lines under the Stack, not the resource: it logs a plugin's output with an empty URN
 * (`diag.StreamMessage("", ...)` in pkg/resource/plugin/plugin.go), and a dynamic provider's methods are not
 * told the URN they work on. So each line names its resource in its text (`cloudinfra: Creating VM "web": ...`).
 * Messages never carry secrets: they are built from routes, URLs without credentials, ids and error codes.
 */

/** What a line is about, when known. */
export interface ProgressContext {
  /** The resource being worked on, for people: `network "app"`. */
  resource?: string;
  /** The resource's URN, when the host knows it (a plugin does; the dynamic host does not). */
  urn?: string;
}

/** A sink for progress lines. */
export interface ProgressLog {
  /** Something that takes time has started or moved on (a job started, its progress, a pause). */
  info(message: string, context?: ProgressContext): void;
  /** Something went wrong and is being dealt with (a retry and its reason). */
  warn(message: string, context?: ProgressContext): void;
}

function line(level: string, message: string, context?: ProgressContext): string {
  const about = context?.resource ? `${context.resource}: ` : "";
  return `cloudinfra${level}: ${about}${message}\n`;
}

/** The default sink: one line per message on stderr, prefixed `cloudinfra:` (warnings `cloudinfra warning:`). */
export const stderrProgressLog: ProgressLog = {
  info(message, context) {
    process.stderr.write(line("", message, context));
  },
  warn(message, context) {
    process.stderr.write(line(" warning", message, context));
  },
};

/** A sink that drops everything. */
export const silentProgressLog: ProgressLog = { info() {}, warn() {} };

/** Milliseconds for people: `850 ms`, `12.5 s`, `6 min 8 s`. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${Number((ms / 1000).toFixed(1))} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  return seconds > 0 ? `${minutes} min ${seconds} s` : `${minutes} min`;
}
