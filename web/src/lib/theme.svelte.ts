// Dark/light theme: follows prefers-color-scheme until the user picks one,
// which is kept in localStorage. The choice is the `data-theme` attribute of <html>.
export type Theme = 'light' | 'dark';
const KEY = 'rota.theme';

const media = typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: dark)') : null;

function saved(): Theme | null {
  try {
    const v = localStorage.getItem(KEY);
    return v === 'light' || v === 'dark' ? v : null;
  } catch {
    return null;
  }
}

class ThemeState {
  chosen = $state<Theme | null>(saved());
  system = $state<Theme>(media?.matches ? 'dark' : 'light');
  current = $derived<Theme>(this.chosen ?? this.system);

  constructor() {
    media?.addEventListener('change', (e) => (this.system = e.matches ? 'dark' : 'light'));
    this.apply();
  }

  apply(): void {
    const root = document.documentElement;
    if (this.chosen) root.dataset.theme = this.chosen;
    else delete root.dataset.theme;
  }

  set(t: Theme): void {
    this.chosen = t;
    try {
      localStorage.setItem(KEY, t);
    } catch {
      // storage off
    }
    this.apply();
  }

  toggle(): void {
    this.set(this.current === 'dark' ? 'light' : 'dark');
  }
}

export const theme = new ThemeState();
