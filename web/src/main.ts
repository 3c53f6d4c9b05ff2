import './app.css';
import { mount } from 'svelte';
import { theme } from './lib/theme.svelte';
import App from './App.svelte';

theme.apply();
const app = mount(App, { target: document.getElementById('app')! });
export default app;
