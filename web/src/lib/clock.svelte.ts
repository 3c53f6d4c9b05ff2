// One shared, coarse clock for "5 min ago" texts (no per-row timers).
class Clock {
  now = $state(Date.now());
  constructor() {
    setInterval(() => {
      if (!document.hidden) this.now = Date.now();
    }, 10_000);
  }
}
export const clock = new Clock();
