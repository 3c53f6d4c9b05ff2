// `node --import ./unit/register.mjs --test unit/….test.mjs`: TypeScript modules importable.
import { register } from 'node:module';

register('./ts-hooks.mjs', import.meta.url);
