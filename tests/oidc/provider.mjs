// A real OpenID provider on loopback for ballast's login tests: the npm package `oidc-provider`
// (pinned in package-lock.json), configured with fixed people whose claims exercise ballast's
// claim mapping, and the clients named on the command line.
//
//   node tests/oidc/provider.mjs --port 0 \
//     --client ballast-corp:corp-secret:http://127.0.0.1:8080/api/v1/auth/callback/corp \
//     --client ballast-partner:partner-secret:http://127.0.0.1:8080/api/v1/auth/callback/partner
//
// Prints exactly one line on stdout once it listens, `issuer=http://127.0.0.1:PORT`, and nothing
// else there (oidc-provider's own notices go to stderr). Ends on SIGTERM or SIGINT, and with
// `--exit-with-stdin` also when its stdin closes (so a test runner that dies leaves no provider).
//
// Options:
//   --port N                 port on 127.0.0.1; 0 (the default) takes any free one
//   --client ID:SECRET:URI   a confidential client (repeatable); URI is its one redirect URI.
//                            At the token endpoint it may send its secret either way:
//                            oidc-provider takes HTTP Basic (client_secret_basic, secret
//                            form-urlencoded inside as RFC 6749 2.3.1 says) and the form's
//                            client_id + client_secret (client_secret_post) from any client
//                            registered with either method.
//   --exit-with-stdin        exit when stdin reaches its end
//
// Login: oidc-provider's built-in development interactions ("devInteractions"): a login form
// (`input[name=login]`, `input[name=password]`, `button.login-submit`) at /interaction/{uid},
// then a consent page (one `button.login-submit`, "Continue"). The login is the account id
// below; any password is accepted. An unknown login is sent back to the client with
// `error=access_denied` (as a provider refusing the person would).
//
// How claims are released (conformIdTokenClaims: false, so every claim the granted scopes allow
// is in the ID token itself, and the same claims are answered by the userinfo endpoint /me):
//   openid   sub, plus the directory claims a provider like Entra ID or Keycloak puts in every
//            token without an extra scope: groups, roles, role, group, upn, unique_name
//   profile  name, given_name, family_name, preferred_username
//   email    email, email_verified
// A person lacking a claim simply does not have it in the token (no empty values).
//
// Grants: authorization_code and refresh_token. PKCE (S256) is required of every client. A
// refresh token is issued on every code exchange of a client allowed the refresh_token grant,
// without asking for offline_access (ballast's default scopes are `openid profile email`).
// Signing: one RS256 key, generated at start (so every run has a new key; `kid` changes too).
// stderr: oidc-provider's warnings, and one line per token issued:
// `provider.mjs: grant authorization_code|refresh_token client=ID`.

import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

import Provider from 'oidc-provider';

// stdout carries the issuer line only: oidc-provider prints notices with console.info.
console.log = (...args) => console.error(...args);
console.info = (...args) => console.error(...args);

/// The people. `sub` is the login typed into the form.
const ACCOUNTS = {
  alice: {
    name: 'Alice Example',
    given_name: 'Alice',
    family_name: 'Example',
    preferred_username: 'alice',
    email: 'alice@example.com',
    email_verified: true,
    groups: ['kafka-admins', 'staff'],
  },
  bob: {
    name: 'Bob Other',
    preferred_username: 'bob',
    email: 'bob@other.org',
    email_verified: true,
    roles: ['viewer'],
  },
  // No email, no preferred_username: the shape of an Entra ID (Azure AD) v1 token.
  carol: {
    given_name: 'Carol',
    upn: 'carol@example.com',
    unique_name: 'EXAMPLE\\carol',
    role: 'operator',
  },
  dave: {
    name: 'Dave Contractor',
    preferred_username: 'dave',
    email: 'dave@example.com',
    email_verified: true,
    group: 'contractors',
  },
};

function usage(message) {
  console.error(`provider.mjs: ${message}`);
  console.error('usage: node provider.mjs [--port N] --client ID:SECRET:REDIRECT_URI ... '
    + '[--exit-with-stdin]');
  process.exit(2);
}

let args;
try {
  args = parseArgs({
    options: {
      port: { type: 'string', default: '0' },
      client: { type: 'string', multiple: true, default: [] },
      'exit-with-stdin': { type: 'boolean', default: false },
    },
    strict: true,
  }).values;
} catch (e) {
  usage(e.message);
}

const port = Number(args.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) usage(`bad --port ${args.port}`);
if (args.client.length === 0) usage('at least one --client is needed');

const clients = args.client.map((spec) => {
  // The redirect URI has colons of its own: split at the first two only.
  const first = spec.indexOf(':');
  const second = first < 0 ? -1 : spec.indexOf(':', first + 1);
  if (first <= 0 || second <= first + 1 || second === spec.length - 1) {
    usage(`bad --client ${spec} (want ID:SECRET:REDIRECT_URI)`);
  }
  return {
    client_id: spec.slice(0, first),
    client_secret: spec.slice(first + 1, second),
    redirect_uris: [spec.slice(second + 1)],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
  };
});

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signingKey = {
  ...privateKey.export({ format: 'jwk' }),
  kid: `test-${randomBytes(6).toString('hex')}`,
  use: 'sig',
  alg: 'RS256',
};

function configuration() {
  return {
    clients,
    jwks: { keys: [signingKey] },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    scopes: ['openid', 'offline_access', 'profile', 'email'],
    claims: {
      openid: ['sub', 'groups', 'roles', 'role', 'group', 'upn', 'unique_name'],
      profile: ['name', 'given_name', 'family_name', 'preferred_username'],
      email: ['email', 'email_verified'],
    },
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    features: {
      devInteractions: { enabled: true },
      userinfo: { enabled: true },
      // Ballast's logout is its own; the provider's end_session stays on (the default).
    },
    async findAccount(_ctx, sub) {
      const claims = ACCOUNTS[sub];
      if (!claims) return undefined;
      return {
        accountId: sub,
        // oidc-provider keeps only the claims the granted scopes release (see above).
        async claims() {
          return { sub, ...claims };
        },
      };
    },
    // Explicit lifetimes (seconds), so the provider prints no "you SHOULD change" notices.
    ttl: {
      AccessToken: 3600,
      AuthorizationCode: 60,
      IdToken: 3600,
      Interaction: 3600,
      Session: 86400,
      Grant: 86400,
      RefreshToken: 86400,
    },
    renderError(ctx, out) {
      ctx.type = 'html';
      const esc = (s) => String(s).replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
      ctx.body = `<!DOCTYPE html><title>oidc error</title><h1>${esc(out.error)}</h1>`
        + `<p id="error_description">${esc(out.error_description ?? '')}</p>`;
    },
  };
}

/// The development login form takes any login; one that names nobody above ends the flow as a
/// refusing provider would: back to the client with `error=access_denied`. (The body is read
/// here and handed on parsed, which oidc-provider accepts with a warning on stderr.)
function refuseUnknownLogins(provider) {
  return async (ctx, next) => {
    if (ctx.method === 'POST' && ctx.path.startsWith('/interaction/')
      && ctx.is('application/x-www-form-urlencoded')) {
      const chunks = [];
      for await (const chunk of ctx.req) chunks.push(chunk);
      const body = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
      if (body.prompt === 'login' && !Object.hasOwn(ACCOUNTS, body.login ?? '')) {
        await provider.interactionFinished(ctx.req, ctx.res, {
          error: 'access_denied',
          error_description: `the test provider knows no ${body.login}`,
        }, { mergeWithLastSubmission: false });
        return;
      }
      ctx.request.body = body;
    }
    await next();
  };
}

const server = createServer();
server.on('error', (e) => {
  console.error(`provider.mjs: ${e.message}`);
  process.exit(1);
});
server.listen(port, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, configuration());
  provider.on('server_error', (_ctx, e) => console.error('provider.mjs: server_error', e));
  provider.use(refuseUnknownLogins(provider));
  // One stderr line per token issued, so a test can tell that its client really came back
  // (a refresh is `grant refresh_token client=…`).
  provider.on('grant.success', (ctx) => {
    console.error(`provider.mjs: grant ${ctx.oidc.params.grant_type} client=${ctx.oidc.client?.clientId}`);
  });
  server.on('request', provider.callback());
  process.stdout.write(`issuer=${issuer}\n`);
});

function stop() {
  server.close();
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
if (args['exit-with-stdin']) {
  process.stdin.on('end', stop);
  process.stdin.on('error', stop);
  process.stdin.resume();
}
