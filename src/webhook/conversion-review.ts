// ConversionReview v1 (apiextensions.k8s.io/v1): the CRD conversion webhook at /convert. Every object of the request
// goes through `convertCloneSet`; one failure fails the whole review (the API server requires all or nothing) with a
// message naming the object. Pure.
import { BadRequestError } from './admission-review.ts';
import type { AdmissionHandlers } from './contracts.ts';

export const CONVERSION_API_VERSION = 'apiextensions.k8s.io/v1';

export interface ConversionReviewReply {
  apiVersion: typeof CONVERSION_API_VERSION;
  kind: 'ConversionReview';
  response: {
    uid: string;
    convertedObjects: Record<string, unknown>[];
    result: { status: 'Success' } | { status: 'Failure'; message: string };
  };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function convertReview(body: unknown, convert: AdmissionHandlers['convertCloneSet']): ConversionReviewReply {
  if (!isObject(body) || body.apiVersion !== CONVERSION_API_VERSION || body.kind !== 'ConversionReview') {
    throw new BadRequestError(`expected apiVersion ${CONVERSION_API_VERSION}, kind ConversionReview (set conversionReviewVersions: [v1] in the CRD)`);
  }
  const req = body.request;
  if (!isObject(req)) throw new BadRequestError('request: Required value');
  const { uid, desiredAPIVersion, objects } = req;
  if (typeof uid !== 'string' || uid === '') throw new BadRequestError('request.uid: Required value');
  if (typeof desiredAPIVersion !== 'string' || desiredAPIVersion === '') throw new BadRequestError('request.desiredAPIVersion: Required value');
  if (!Array.isArray(objects)) throw new BadRequestError('request.objects: Required value');
  const reply = (result: ConversionReviewReply['response']['result'], convertedObjects: Record<string, unknown>[]): ConversionReviewReply => ({
    apiVersion: CONVERSION_API_VERSION,
    kind: 'ConversionReview',
    response: { uid, convertedObjects, result },
  });
  const converted: Record<string, unknown>[] = [];
  for (const [i, obj] of objects.entries()) {
    if (!isObject(obj)) return reply({ status: 'Failure', message: `request.objects[${i}]: not a JSON object` }, []);
    try {
      converted.push(obj.apiVersion === desiredAPIVersion ? obj : convert(obj, desiredAPIVersion));
    } catch (e) {
      const meta = isObject(obj.metadata) ? obj.metadata : {};
      const id = `${String(meta.namespace ?? '')}/${String(meta.name ?? '')}`;
      return reply(
        { status: 'Failure', message: `converting CloneSet ${id} from ${String(obj.apiVersion)} to ${desiredAPIVersion}: ${e instanceof Error ? e.message : String(e)}` },
        [],
      );
    }
  }
  return reply({ status: 'Success' }, converted);
}
