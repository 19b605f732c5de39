// A real authorization server for the auth end-to-end tests: oidc-provider (an OpenID Certified
// OAuth 2.0 / OIDC server; installed by scripts/setup-oidc), on 127.0.0.1 and a free port.
//   node tests/support/oidc_provider.mjs   (env OIDC_PROVIDER_MODULE = its lib/index.js)
// Prints one JSON line {"issuer": "http://127.0.0.1:PORT"} on stdout when it listens; exits on
// stdin EOF (so it never outlives the test session that started it).
// Configured with: resource indicators (RFC 8707: a token's `aud` is the requested resource,
// JWT access tokens, RS256), client_credentials, Dynamic Client Registration, PKCE (required
// for the authorization code flow), introspection, and dev interactions (a login and consent
// form that scripts can post: login, then consent) for the authorization code flow.
// GET /_test/events lists what the provider did (registrations, interactions, authorizations
// and grants, with their client, scope and resource; never a token or a code), so tests can
// assert on what the authorization server received.
import http from 'node:http';
import crypto from 'node:crypto';
import { pathToFileURL } from 'node:url';

const { default: Provider } = await import(pathToFileURL(process.env.OIDC_PROVIDER_MODULE).href);

const SCOPES = 'mcp notes:read notes:write notes:admin';
const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'oidc-rsa-1', use: 'sig', alg: 'RS256' };

const server = http.createServer();
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    jwks: { keys: [jwk] },
    clients: [
      { client_id: 'svc', client_secret: 'svc-secret', grant_types: ['client_credentials'],
        redirect_uris: [], response_types: [], scope: SCOPES },
      { client_id: 'app', token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'],
        redirect_uris: ['http://127.0.0.1:33333/callback'], response_types: ['code'], scope: `openid offline_access ${SCOPES}` },
      { client_id: 'rs', client_secret: 'rs-secret', grant_types: [], redirect_uris: [], response_types: [] },
    ],
    scopes: ['openid', 'offline_access', ...SCOPES.split(' ')],
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: true },
      clientCredentials: { enabled: true },
      registration: { enabled: true },
      introspection: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => {
          if (!resource.startsWith('http://127.0.0.1:') && !resource.startsWith('https://')) {
            throw new Error('unknown resource');
          }
          return { scope: SCOPES, audience: resource, accessTokenTTL: 300, accessTokenFormat: 'jwt',
                   jwt: { sign: { alg: 'RS256' } } };
        },
      },
    },
  });
  provider.proxy = false;
  const events = [];
  const record = (kind, ctx, extra = {}) => {
    const p = ctx.oidc?.params || {};
    const res = p.resource;
    events.push({ event: kind, client_id: ctx.oidc?.client?.clientId, grant_type: p.grant_type, scope: p.scope,
                  resource: res === undefined ? undefined : [].concat(res), prompt: p.prompt,
                  code_challenge_method: p.code_challenge_method, ...extra });
  };
  provider.on('registration_create.success', (ctx, client) => record('registration', ctx, {
    client_id: client.clientId, application_type: client.applicationType, redirect_uris: client.redirectUris,
    registered_scope: client.scope, token_endpoint_auth_method: client.tokenEndpointAuthMethod }));
  provider.on('interaction.started', (ctx, prompt) => record('interaction', ctx, { name: prompt.name }));
  provider.on('authorization.success', (ctx) => record('authorization', ctx));
  provider.on('authorization.error', (ctx, err) => record('authorization.error', ctx, { error: err.error, error_description: err.error_description }));
  provider.on('grant.success', (ctx) => record('grant', ctx));
  provider.on('grant.error', (ctx, err) => record('grant.error', ctx, { error: err.error, error_description: err.error_description }));
  const callback = provider.callback();
  server.on('request', (req, res) => {
    if (req.url === '/_test/events') {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(events));
      return;
    }
    callback(req, res);
  });
  process.stdout.write(JSON.stringify({ issuer }) + '\n');
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
