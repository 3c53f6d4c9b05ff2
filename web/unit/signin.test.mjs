// Unit tests of what the sign-in form says while the server makes it wait (src/lib/signin.ts)
// and of reading Retry-After (src/api/client.ts): `npm run test:unit`, no server or browser.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { secondsLeft, waitMessage, waitText } from '../src/lib/signin.ts';
import { retryAfterSeconds } from '../src/api/client.ts';

describe('retryAfterSeconds', () => {
  it('reads delta-seconds and HTTP dates, 0 when absent or unreadable', () => {
    assert.equal(retryAfterSeconds('12'), 12);
    assert.equal(retryAfterSeconds(' 1 '), 1);
    assert.equal(retryAfterSeconds(null), 0);
    assert.equal(retryAfterSeconds('soon'), 0);
    const now = Date.parse('2026-01-01T00:00:00Z');
    assert.equal(retryAfterSeconds('Thu, 01 Jan 2026 00:00:30 GMT', now), 30);
    assert.equal(retryAfterSeconds('Thu, 01 Jan 2026 00:00:00 GMT', now + 5000), 0);
  });
});

describe('sign-in wait', () => {
  it('counts down in whole seconds, then says the form may be used again', () => {
    assert.equal(secondsLeft(10_500, 0), 11);
    assert.equal(secondsLeft(10_000, 10_000), 0);
    assert.equal(waitMessage(429, 8), 'Too many failed sign-ins. Try again in 8 s.');
    assert.equal(waitMessage(503, 1), 'The server is busy checking passwords. Try again in 1 s.');
    assert.equal(waitMessage(429, 0), 'You can try again now.');
  });
  it('names minutes for long waits', () => {
    assert.equal(waitText(59), '59 s');
    assert.equal(waitText(60), '1 min');
    assert.equal(waitText(125), '2 min 5 s');
    assert.equal(waitText(0.2), '1 s');
  });
});
