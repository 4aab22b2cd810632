// Prepares Podium for the side-by-side over HTTP, as bench/InferenceBench.ts's prepareLeaderboard does:
// a session JWT (HS256, the test secret), an API token with leaderboards:inference, a PUSH leaderboard,
// a Custom candidate at UPSTREAM (no auth) chosen for serving. Prints {"id","secret"} as JSON.
// Env: PODIUM_URL (http://127.0.0.1:18090), UPSTREAM (http://127.0.0.1:18080/v1)
import crypto from 'node:crypto';

const base = process.env.PODIUM_URL ?? 'http://127.0.0.1:18090';
const upstream = process.env.UPSTREAM ?? 'http://127.0.0.1:18080/v1';
const secret = 'test-session-secret-that-is-long-enough-0123456789';
const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
const now = Math.floor(Date.now() / 1000);
const unsigned = `${b64({ alg: 'HS256' })}.${b64({ email: 'bench-sbs@example.com', email_verified: true, sub: 'bench-sbs', iat: now, exp: now + 4 * 3600 })}`;
const jwt = `${unsigned}.${crypto.createHmac('sha256', secret).update(unsigned).digest('base64url')}`;

async function json(method, path, body, status) {
  const r = await fetch(base + path, { method, headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await r.text();
  if (r.status !== status) throw new Error(`${method} ${path} answered ${r.status}: ${text}`);
  return JSON.parse(text);
}
const { secret: token } = await json('POST', '/api/tokens', { name: 'bench', scopes: ['leaderboards:inference'] }, 201);
const id = (await json('POST', '/api/leaderboards', { name: 'bench', dataset_type: 'PUSH' }, 201)).leaderboard.id;
const candidate = (await json('POST', `/api/leaderboards/${id}/models`, { name: 'up', platform: 'Custom', url: upstream, auth_type: 'none' }, 201)).model.id;
await json('PATCH', `/api/leaderboards/${id}`, { chosen_model_strategy: 'manual', chosen_leaderboard_model_id: candidate }, 200);
console.log(JSON.stringify({ id, secret: token }));
