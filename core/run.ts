// Who runs an operation, and what the API resolved for it: the one context every step of a generate or a
// manage receives, instead of copies of its ids in each step's input.
export interface RunContext {
  operationId: string;
  subscriptionId: string;
  /** The acting user: the owner of what is written, the user metered. */
  userId: string;
  /** Location method -> the subscription's connection it uses (resolved by the API; the activity opens it,
   *  so no secret is ever in a workflow's input or history). */
  connections?: Record<string, string>;
  /** The locations the run names whose steps are remote transfers (core/locations.ts `transfer`): normal
   *  activities that heartbeat, with journaled writes. The others' steps are local activities. */
  remote?: string[];
  /** A synchronous run: epoch ms when its caller stops waiting (the API's wait, GENERATE_TIMEOUT_MS). A drive
   *  that throttles longer is answered TOO_MANY_REQUESTS with its Retry-After before then, instead of a 504;
   *  a conversion still queued for the converter then is not run (the caller gave up; its next request must
   *  not wait behind it); one already running finishes and the run records its outcome. */
  callerDeadline?: number;
}

/** Whether the run's steps at `method` are remote transfers (the location's answer, carried by the run). */
export function isRemote(run: Pick<RunContext, 'remote'>, method: string): boolean {
  return run.remote?.includes(method) ?? false;
}

/** The longest a synchronous generate or manage run may take (its execution timeout; the server ends it
 *  past this). Far beyond any caller's wait (GENERATE_TIMEOUT_MS): a run that outlives its caller finishes
 *  and records its outcome. It is also how old a scratch file must be before the sweep removes it (an
 *  async generate has no execution timeout, its callbacks retry for longer: a generation of one that
 *  stalls past this finds its scratch files gone and fails). */
export const RUN_TIME_LIMIT_MS = 24 * 60 * 60 * 1000;
