// Hash routing: #/  #/nodes/gpu-a  #/nodes/gpu-a/gpus/3  #/jobs  #/jobs/42  #/arrays/7  #/submit  #/reservations
// #/violations  #/violations/7  #/queue  #/usage  #/power  #/tokens  #/admin/users|groups|quotas|policies|ssh-nodes
// (the server serves only /).

export type Route =
  | { name: 'overview'; params: URLSearchParams }
  | { name: 'node'; node: string; params: URLSearchParams }
  | { name: 'gpu'; node: string; index: number; params: URLSearchParams }
  | { name: 'jobs'; params: URLSearchParams }
  | { name: 'job'; id: number }
  | { name: 'array'; id: number }
  | { name: 'submit' }
  | { name: 'reservations'; params: URLSearchParams }
  | { name: 'violations'; params: URLSearchParams }
  | { name: 'violation'; id: number }
  | { name: 'queue'; params: URLSearchParams }
  | { name: 'usage'; params: URLSearchParams }
  | { name: 'power' }
  | { name: 'tokens' }
  | { name: 'admin'; section: string }
  | { name: 'notfound'; path: string };

function parse(hash: string): Route {
  let path = hash.replace(/^#/, '');
  if (!path.startsWith('/')) path = '/' + path;
  const q = path.indexOf('?');
  const params = new URLSearchParams(q >= 0 ? path.slice(q + 1) : '');
  if (q >= 0) path = path.slice(0, q);
  path = path.replace(/\/+$/, '') || '/';
  if (path === '/') return { name: 'overview', params };
  if (path === '/jobs') return { name: 'jobs', params };
  if (path === '/submit') return { name: 'submit' };
  if (path === '/reservations') return { name: 'reservations', params };
  if (path === '/violations') return { name: 'violations', params };
  if (path === '/queue') return { name: 'queue', params };
  if (path === '/usage') return { name: 'usage', params };
  if (path === '/power') return { name: 'power' };
  if (path === '/tokens') return { name: 'tokens' };
  if (path === '/admin') return { name: 'admin', section: 'users' };
  const a = /^\/admin\/([a-z-]+)$/.exec(path);
  if (a) return { name: 'admin', section: a[1] };
  const n = /^\/nodes\/([^/]+)(?:\/gpus\/(\d+))?$/.exec(path);
  if (n) {
    let node: string;
    try {
      node = decodeURIComponent(n[1]);
    } catch {
      return { name: 'notfound', path };
    }
    return n[2] === undefined ? { name: 'node', node, params } : { name: 'gpu', node, index: Number(n[2]), params };
  }
  const v = /^\/violations\/(\d+)$/.exec(path);
  if (v) return { name: 'violation', id: Number(v[1]) };
  const m = /^\/jobs\/(\d+)$/.exec(path);
  if (m) return { name: 'job', id: Number(m[1]) };
  const ar = /^\/arrays\/(\d+)$/.exec(path);
  if (ar) return { name: 'array', id: Number(ar[1]) };
  return { name: 'notfound', path };
}

class Router {
  route = $state<Route>(parse(location.hash));
  /** Counts navigations after the first page (for focus management). */
  navigations = $state(0);

  constructor() {
    addEventListener('hashchange', () => {
      this.route = parse(location.hash);
      this.navigations++;
    });
  }

  go(hash: string): void {
    if (location.hash === hash) return;
    location.hash = hash;
  }

  /** Replaces the current entry (filters) without a history step. */
  replace(hash: string): void {
    history.replaceState(history.state, '', hash);
    this.route = parse(hash);
  }
}

export const router = new Router();

/** Links to the detail screens (names are URL-encoded). */
export const nodeHref = (node: string): string => `#/nodes/${encodeURIComponent(node)}`;
export const gpuHref = (node: string, index: number): string => `#/nodes/${encodeURIComponent(node)}/gpus/${index}`;
