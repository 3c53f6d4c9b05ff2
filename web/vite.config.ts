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
    rollupOptions: {
      output: {
        // uPlot (no dependencies) in a lazily loaded chunk of its own, fetched with
        // the node and GPU detail screens, never part of the first screen.
        manualChunks(id) {
          return /node_modules\/uplot\//.test(id) ? 'uplot' : undefined;
        },
      },
    },
  },
  server: {
    proxy: {
      '/api': { target, changeOrigin: false },
    },
  },
});
