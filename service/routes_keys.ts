/**
 * @module
 * The key routes (`/v1/keys...`): register a zkey of the keys directory, list, show, export its
 * verification key, delete (refused while jobs of it are queued or running).
 */
import { ServiceError } from "./errors.ts";
import { readJson } from "./http.ts";
import type { RouteRequest, Routes } from "./http.ts";
import { keySummary } from "./keys.ts";
import type { KeyRegistry } from "./keys.ts";
import { parse, validators } from "./schemas.ts";
import type { JobStore } from "./store.ts";

/** A registration body is a name and an id: this is plenty. */
const REGISTER_BODY_BYTES = 64 * 1024;

/** The routes of the key registry. */
export function keyRoutes(keys: KeyRegistry, store: JobStore): Routes {
  const keyParam = (req: RouteRequest) => parse(validators.keyId, req.params.id, "param:id");
  return {
    "/v1/keys": {
      GET: () => Response.json({ keys: keys.list().map(keySummary) }),
      POST: async (req) => {
        const body = parse(validators.registerKey, await readJson(req, REGISTER_BODY_BYTES));
        const { key, created } = await keys.register(body.name, body.id);
        return Response.json(keySummary(key), { status: created ? 201 : 200, headers: { Location: `/v1/keys/${key.id}` } });
      },
    },
    "/v1/keys/:id": {
      GET: (req) => Response.json(keySummary(keys.get(keyParam(req)))),
      DELETE: async (req) => {
        const id = keyParam(req);
        keys.get(id);
        const active = await store.activeJobs(id);
        if (active > 0) throw new ServiceError(409, "KEY_IN_USE", `key ${id} has ${active} queued or running job(s); delete it once they finish`);
        return Response.json({ deleted: keySummary(keys.remove(id)) });
      },
    },
    "/v1/keys/:id/verification_key": { GET: (req) => Response.json(keys.verificationKey(keyParam(req))) },
  };
}
