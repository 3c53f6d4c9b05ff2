// What the sign-in form says when the server refuses an attempt for a while (429 after
// failed sign-ins, 503 while password checks are busy), counting the wait down.

/** "12 s", "2 min 5 s": the wait left, rounded up to whole seconds. */
export function waitText(seconds: number): string {
  const s = Math.max(0, Math.ceil(seconds));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  const rest = s % 60;
  return rest ? `${m} min ${rest} s` : `${m} min`;
}

/** The message for an attempt refused at status `status` with `secondsLeft` still to wait. */
export function waitMessage(status: number, secondsLeft: number): string {
  if (secondsLeft <= 0) return 'You can try again now.';
  const why = status === 429 ? 'Too many failed sign-ins.' : 'The server is busy checking passwords.';
  return `${why} Try again in ${waitText(secondsLeft)}.`;
}

/** Seconds left until `untilMs` at `nowMs`, rounded up. */
export function secondsLeft(untilMs: number, nowMs: number): number {
  return Math.max(0, Math.ceil((untilMs - nowMs) / 1000));
}
