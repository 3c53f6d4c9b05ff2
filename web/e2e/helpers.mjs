// Helpers shared by the e2e test files: polling, `rota dev`, process groups, API calls.
import { spawn } from 'node:child_process';

const ROTA_BIN = process.env.ROTA_BIN;

/** Polls `fn` until it returns a truthy value; fails with `what` after `timeout` ms. */
export async function eventually(what, fn, { timeout = 30_000, interval = 100 } = {}) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
      last = v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeout} ms waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
    }
    await new Promise((r) => setTimeout(r, interval));
  }
}

/** Starts `rota dev`; resolves once it printed the API URL and the accounts. */
export function startRota(dataDir) {
  const child = spawn(ROTA_BIN, ['dev', '--listen', '127.0.0.1:0', '--data-dir', dataDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group: the agents go down with it
  });
  const out = [];
  const err = [];
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => {
    err.push(d);
    if (err.length > 200) err.shift();
  });
  const ready = new Promise((resolve, reject) => {
    let buf = '';
    let url = '';
    let accounts = null;
    const timer = setTimeout(() => reject(new Error(`rota dev did not start in 60 s:\n${out.join('')}\n${err.join('')}`)), 60_000);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => {
      out.push(d);
      buf += d;
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        const api = /API:\s+(\S+?)\/api\/v1/.exec(line);
        if (api) url = api[1];
        if (/accounts:/.test(line)) {
          accounts = {};
          for (const m of line.matchAll(/(\S+) \/ (\S+)/g)) accounts[m[1]] = m[2];
        }
        if (url && accounts) {
          clearTimeout(timer);
          resolve({ url, accounts });
        }
      }
    });
    child.once('exit', (code, sig) => {
      clearTimeout(timer);
      reject(new Error(`rota dev exited (${code ?? sig}) before it was ready:\n${out.join('')}\n${err.join('')}`));
    });
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
  return { child, ready, logs: () => out.join('') + err.join('') };
}

/** SIGTERM to the process group, SIGKILL after 10 s; resolves when the leader exited. */
export async function stopProcess(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  const kill = (sig) => {
    try {
      process.kill(-child.pid, sig);
    } catch {
      try {
        child.kill(sig);
      } catch {
        // gone
      }
    }
  };
  kill('SIGTERM');
  const t = setTimeout(() => kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(t);
  // Anything of the group still there (a job task) goes too.
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // none left
  }
}

export async function apiCall(base, method, p, token, body) {
  const headers = { Accept: 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(base + p, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    // not JSON
  }
  return { status: res.status, json, text };
}


/**
 * Waits until `count` nodes are ready (rota dev's agents register a moment after it prints
 * its URL; on a loaded machine, seconds later). Screens that read the node list once on
 * opening (the calendar) would otherwise miss the late ones.
 */
export async function waitForReadyNodes(base, accounts, count = 3, timeout = 60_000) {
  const login = await apiCall(base, 'POST', '/api/v1/auth/login', null, {
    username: 'admin',
    password: accounts.admin,
  });
  if (login.status !== 200) throw new Error(`admin sign-in failed: ${login.status} ${login.text}`);
  await eventually(
    `${count} ready nodes`,
    async () => {
      const r = await apiCall(base, 'GET', '/api/v1/nodes', login.json.token);
      return r.status === 200 && r.json.nodes.filter((n) => n.state === 'ready').length >= count;
    },
    { timeout, interval: 250 },
  );
}
