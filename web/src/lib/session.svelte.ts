// The signed-in user. The token lives in localStorage (api/client.ts) so the
// session survives reloads; any 401 signs out with a notice.
import { ApiError, get, getToken, onUnauthorized, post, setToken } from '../api/client';
import type { LoginResponse, User } from '../api/types';

const USER_KEY = 'rota.user';

function storedUser(): User | null {
  if (!getToken()) return null;
  try {
    const raw = localStorage.getItem(USER_KEY);
    return raw ? (JSON.parse(raw) as User) : null;
  } catch {
    return null;
  }
}

function storeUser(u: User | null): void {
  try {
    if (u) localStorage.setItem(USER_KEY, JSON.stringify(u));
    else localStorage.removeItem(USER_KEY);
  } catch {
    // storage off
  }
}

class Session {
  /** The signed-in user; null when signed out. */
  user = $state<User | null>(storedUser());
  /** Why the user was signed out (shown on the sign-in screen). */
  notice = $state('');

  get signedIn(): boolean {
    return this.user !== null;
  }

  get isAdmin(): boolean {
    return this.user?.role === 'admin';
  }

  async login(username: string, password: string): Promise<void> {
    const r = await post<LoginResponse>('/api/v1/auth/login', { username, password }, { anonymous: true });
    setToken(r.token);
    storeUser(r.user);
    this.notice = '';
    this.user = r.user;
  }

  async logout(): Promise<void> {
    try {
      await post('/api/v1/auth/logout');
    } catch (e) {
      // Signed out either way; a 401 here means the token was already gone.
      if (!(e instanceof ApiError)) console.warn('sign out:', e);
    }
    this.clear('');
  }

  /** Checks a stored token on start (a 401 ends the session through the handler). */
  async refresh(): Promise<void> {
    if (!getToken()) {
      this.clear('');
      return;
    }
    try {
      const u = await get<User>('/api/v1/auth/whoami');
      storeUser(u);
      this.user = u;
    } catch {
      // 401 is handled by onUnauthorized; a network error keeps the stored user.
    }
  }

  clear(notice: string): void {
    setToken(null);
    storeUser(null);
    this.notice = notice;
    this.user = null;
  }
}

export const session = new Session();

onUnauthorized(() => {
  if (session.user) session.clear('Your session expired, sign in again.');
});
