// Formatting helpers (pure functions).

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

export function bytes(n: number | undefined | null, digits = 1): string {
  if (n === undefined || n === null || !isFinite(n)) return '–';
  let v = n;
  let u = 0;
  while (Math.abs(v) >= 1024 && u < UNITS.length - 1) {
    v /= 1024;
    u++;
  }
  return `${u === 0 ? v : v.toFixed(v >= 100 ? 0 : digits)} ${UNITS[u]}`;
}

/** "12.3 / 80 GiB" in the unit of the total. */
export function bytesOf(used: number | undefined, total: number | undefined): string {
  if (total === undefined || total <= 0) return used === undefined ? '–' : bytes(used);
  let u = 0;
  let t = total;
  while (t >= 1024 && u < UNITS.length - 1) {
    t /= 1024;
    u++;
  }
  const scale = 1024 ** u;
  const v = used === undefined ? 0 : used / scale;
  const usedS = used === undefined ? '–' : v < 0.05 ? '0' : v.toFixed(v >= 100 ? 0 : 1);
  return `${usedS} / ${t.toFixed(t >= 100 ? 0 : 1).replace(/\.0$/, '')} ${UNITS[u]}`;
}

/** A percentage, whole, without a space before the sign: "100%" (every tile, chart, axis and
 * table of the UI writes percentages through this one function). */
export function pct(n: number | undefined | null): string {
  return n === undefined || n === null || !isFinite(n) ? '–' : `${Math.round(n)}%`;
}

/** A temperature, whole: "45 °C". */
export function celsius(c: number | undefined | null): string {
  return c === undefined || c === null || !isFinite(c) ? '–' : `${Math.round(c)} °C`;
}

/** Power in watts, whole when whole ("350 W", "12.5 W"); from 10,000 W in kW ("313.6 kW"). */
export function powerW(w: number | undefined | null): string {
  if (w === undefined || w === null || !isFinite(w)) return '–';
  if (Math.abs(w) >= 10_000) return `${(w / 1000).toFixed(1)} kW`;
  return `${Number.isInteger(w) ? w : w.toFixed(1)} W`;
}

/** Power given in milliwatts, to the watt (see powerW). */
export function watts(mw: number | undefined | null): string {
  return mw === undefined || mw === null || !isFinite(mw) ? '–' : powerW(Math.round(mw / 1000));
}

const FIGURE_SMALL = new Intl.NumberFormat('en-US', { maximumSignificantDigits: 3 });
const FIGURE_LARGE = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/** An amount (GPU-hours, kWh, a percentage) to 3 significant digits, whole from 100 on:
 * "0", "0.0026", "0.77", "15.9", "100", "1,234"; a dash for nothing. */
export function figure(n: number | undefined | null): string {
  if (n === undefined || n === null || !isFinite(n)) return '–';
  if (n === 0) return '0';
  return Math.abs(n) >= 100 ? FIGURE_LARGE.format(n) : FIGURE_SMALL.format(n);
}

export function num(n: number | undefined | null, digits = 2): string {
  return n === undefined || n === null || !isFinite(n) ? '–' : n.toFixed(digits);
}

/** "12 s", "5 min", "3 h 4 min", "2 d 3 h". */
export function duration(ms: number): string {
  if (!isFinite(ms)) return '–';
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d} d ${h % 24} h` : `${d} d`;
}

export function since(iso: string | undefined | null, now: number): string {
  if (!iso) return '–';
  const t = Date.parse(iso);
  return isNaN(t) ? '–' : duration(now - t);
}

/** "5 min ago" for something that has happened; "just now" when the page's
 * clock (which ticks every 10 s) has not caught up with it yet. */
export function ago(iso: string | undefined | null, now: number): string {
  if (!iso) return '–';
  const t = Date.parse(iso);
  if (isNaN(t)) return '–';
  return t >= now ? 'just now' : `${duration(now - t)} ago`;
}

/** "in 5 min" / "5 min ago". */
export function relative(iso: string | undefined | null, now: number): string {
  if (!iso) return '–';
  const t = Date.parse(iso);
  if (isNaN(t)) return '–';
  return t >= now ? `in ${duration(t - now)}` : `${duration(now - t)} ago`;
}

export function dateTime(iso: string | undefined | null): string {
  if (!iso) return '–';
  const d = new Date(iso);
  if (isNaN(d.getTime())) return iso;
  return d.toLocaleString(undefined, {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
}

/** A duration as the server writes it ("30m", "1h30m", "2d", "1.5h") in the
 * UI's words ("30 min", "1 h 30 min"); anything else as it is. */
export function durationText(text: string | undefined | null): string {
  if (!text) return '–';
  const scale: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  const part = /(\d+(?:\.\d+)?)(ms|s|m|h|d) ?/y;
  let ms = 0;
  let at = 0;
  while (at < text.length) {
    part.lastIndex = at;
    const m = part.exec(text);
    if (!m) return text;
    ms += Number(m[1]) * scale[m[2]];
    at = part.lastIndex;
  }
  return duration(ms);
}

/** The UTC times the server writes into its messages ("reserved by carol until
 * 2026-11-29T14:00:00Z") in local time: "14:00" on the day of `now`, else with
 * the date ("Nov 30, 14:00"). */
export function localTimes(text: string, now: number): string {
  return text.replace(/\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?Z\b/g, (iso) => {
    const d = new Date(iso);
    if (isNaN(d.getTime())) return iso;
    const time = d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
    if (d.toDateString() === new Date(now).toDateString()) return time;
    return `${d.toLocaleDateString(undefined, { month: 'short', day: 'numeric' })}, ${time}`;
  });
}

/** A fair-share weight or similar factor: "1", "0.5", "1.25". */
export function factor(n: number | undefined | null): string {
  return n === undefined || n === null || !isFinite(n) ? '–' : String(Math.round(n * 100) / 100);
}

/** Splits a command line into words: spaces separate, '…' and "…" quote, \ escapes. */
export function splitWords(s: string): string[] {
  const out: string[] = [];
  let cur = '';
  let have = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (quote) {
      if (c === quote) quote = null;
      else if (c === '\\' && quote === '"' && i + 1 < s.length && '"\\$`'.includes(s[i + 1])) cur += s[++i];
      else cur += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      have = true;
    } else if (c === '\\' && i + 1 < s.length) {
      cur += s[++i];
      have = true;
    } else if (/\s/.test(c)) {
      if (have) out.push(cur);
      cur = '';
      have = false;
    } else {
      cur += c;
      have = true;
    }
  }
  if (quote) throw new Error(`unclosed ${quote} quote`);
  if (have) out.push(cur);
  return out;
}
