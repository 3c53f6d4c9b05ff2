import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

// `npm run dev` proxies the API to a running rota server:
//   ROTA_URL=http://127.0.0.1:PORT npm run dev
const target = process.env.ROTA_URL || 'http://127.0.0.1:8080';

export default defineConfig({
  base: '/',
  plugins: [svelte()],
  build: {
    outDir: 'dist',
    assetsDir: 'assets',
    sourcemap: false,
    modulePreload: { polyfill: false },
    reportCompressedSize: true,
    chunkSizeWarningLimit: 200,
  },
  server: {
    proxy: {
      '/api': { target, changeOrigin: false },
    },
  },
});
