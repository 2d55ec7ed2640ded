// A scripted Gemini API (generativelanguage's `v1beta/models/<model>:generateContent` and
// `:streamGenerateContent?alt=sse`) on 127.0.0.1, for driving the real Gemini CLI without a model
// (test/helpers/scripted-server.ts is the part every protocol shares). A request offering function
// declarations is the agent's loop and gets the script's next turn; the others (its router, checks
// that ask for JSON) are side requests, answered with the smallest value their schema accepts.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ServerResponse } from 'node:http';
import type { Cleanup } from './daemon.ts';
import { type RecordedRequest, type ScriptedServer, sendJson, sendSse, startScriptedServer, tokens, type Turn } from './scripted-server.ts';

// Points the Gemini CLI of `home` at `url` with a dummy key: GOOGLE_GEMINI_BASE_URL alone selects
// its "gateway" auth, which headless runs refuse ("Invalid auth method selected"), so the user
// settings in `home` select the API key auth, which takes the base URL from the environment.
export function geminiModelEnv(url: string, home: string): Record<string, string> {
  mkdirSync(path.join(home, '.gemini'), { recursive: true });
  writeFileSync(path.join(home, '.gemini', 'settings.json'), JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } } }));
  return { HOME: home, GEMINI_API_KEY: 'grove-test-dummy-key', GOOGLE_GEMINI_BASE_URL: url };
}

function googleError(res: ServerResponse, code: number, status: string, message: string): void {
  sendJson(res, code, { error: { code, message, status } });
}

// The smallest value a response schema (the API's OBJECT/STRING/… or JSON Schema's lowercase
// types) accepts: required properties only, an enum's first value.
function sample(schema: any): unknown {
  if (Array.isArray(schema?.enum) && schema.enum.length > 0) return schema.enum[0];
  switch (String(schema?.type ?? '').toLowerCase()) {
    case 'object':
      return Object.fromEntries((schema.required ?? []).map((key: string) => [key, sample(schema.properties?.[key])]));
    case 'array':
      return [];
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return false;
    default:
      return 'scripted';
  }
}

function offersTools(body: any): boolean {
  return (body?.tools ?? []).some((tool: any) => (tool.functionDeclarations ?? []).length > 0);
}

export interface GeminiServerOptions {
  /** the text of a side request that asks for text (not JSON); default "ok" */
  side?: (body: any) => string;
}

// Starts the server; the loop's requests get `script` in order. Past the script's end a loop
// request is answered 400 INVALID_ARGUMENT naming it, which the CLI does not retry.
export async function startGeminiServer(t: Cleanup, script: Turn[], opts: GeminiServerOptions = {}): Promise<ScriptedServer> {
  return startScriptedServer(t, script, (rec, res, loop) => {
    const { body } = rec;
    const match = /^\/v1(?:beta|alpha)?\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/.exec(rec.path);
    if (rec.method !== 'POST' || !match) return googleError(res, 404, 'NOT_FOUND', `the scripted Gemini server has no ${rec.method} ${rec.path}`);
    const [, model, method] = match;
    if (typeof body !== 'object' || body === null || !Array.isArray(body.contents)) return googleError(res, 400, 'INVALID_ARGUMENT', 'contents: an array is required');
    if (method === 'countTokens') return sendJson(res, 200, { totalTokens: tokens(body.contents) });

    let parts: any[];
    if (offersTools(body)) {
      const turn = loop.take();
      if (!turn) return googleError(res, 400, 'INVALID_ARGUMENT', loop.exhausted());
      parts = turn.text ? [{ text: turn.text }] : [];
      if ('tool_use' in turn) parts.push({ functionCall: { name: turn.tool_use.name, args: turn.tool_use.input } });
    } else {
      const schema = body.generationConfig?.responseJsonSchema ?? body.generationConfig?.responseSchema;
      parts = [{ text: schema ? JSON.stringify(sample(schema)) : (opts.side?.(body) ?? 'ok') }];
    }
    const usageMetadata = { promptTokenCount: tokens(body.contents), candidatesTokenCount: tokens(parts), totalTokenCount: tokens(body.contents) + tokens(parts) };
    const answer = (content: any[], last: boolean) => ({
      candidates: [{ content: { role: 'model', parts: content }, index: 0, ...(last ? { finishReason: 'STOP' } : {}) }],
      ...(last ? { usageMetadata } : {}),
      modelVersion: model,
      responseId: loop.id('resp_scripted_'),
    });
    if (method === 'generateContent') return sendJson(res, 200, answer(parts, true));
    // Streamed: each part in a chunk of its own, the last one with the finish reason and the usage.
    sendSse(res, parts.map((part, i) => `data: ${JSON.stringify(answer([part], i === parts.length - 1))}\r\n\r\n`).join(''));
  });
}

// The function responses of a request's last user content (what the CLI sent back for the
// previous turn's calls): each call's name and its response object.
export function functionResponses(req: RecordedRequest): Array<{ name: string; response: any }> {
  const last = [...(req.body?.contents ?? [])].reverse().find((c: any) => c.role === 'user');
  return (last?.parts ?? []).filter((p: any) => p.functionResponse).map((p: any) => ({ name: p.functionResponse.name, response: p.functionResponse.response }));
}

// The names of the functions a request offered the model.
export function functionNames(req: RecordedRequest): string[] {
  return (req.body?.tools ?? []).flatMap((tool: any) => (tool.functionDeclarations ?? []).map((f: any) => f.name));
}
