import Type from 'typebox';
import { ok } from '../http/envelope.ts';
import { answer, Nullable } from '../http/response-schemas.ts';
import { type App, caller } from '../http/types.ts';
import type { ConsoleService } from './console.service.ts';

const SessionsAnswer = answer({
  sessions: Type.Array(
    Type.Object({
      id: Type.String(),
      created_at: Type.Integer({ description: 'epoch milliseconds' }),
      last_used_at: Nullable(Type.Integer({ description: 'epoch milliseconds, to the minute' })),
      ip: Nullable(Type.String()),
      user_agent: Nullable(Type.String()),
      expires_at: Type.Integer({ description: 'epoch milliseconds' }),
      current: Type.Boolean({ description: 'the session this request came with' }),
    }),
  ),
});

/** A console user's own sessions (permission `profile`): the list, one's end, and signing out everywhere. */
export function profileSessionsRoutes(app: App, console: ConsoleService): void {
  app.get('/users/me/sessions', { schema: { response: SessionsAnswer } }, async (req) =>
    ok({ sessions: await console.sessionsOf(caller(req)) }),
  );
  app.delete(
    '/users/me/sessions/:id',
    { schema: { params: Type.Object({ id: Type.String() }), response: answer({}) } },
    async (req) => {
      await console.endSession(caller(req), req.params.id);
      return ok({});
    },
  );
  app.delete('/users/me/sessions', { schema: { response: answer({}) } }, async (req) => {
    await console.endAllOf(caller(req));
    return ok({});
  });
}
