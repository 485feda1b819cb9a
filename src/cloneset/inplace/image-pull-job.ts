// The ImagePullJob object (apps.kruise.io/v1alpha1) the image pre-download creates (docs/features.md#image-pre-download).
// Its own module so that the plan's actions (plan/actions.ts) can name it without importing the pre-download planner.
import type { IntOrString } from '../../api/cloneset.ts';
import type { KubeObject, LabelSelector, ObjectMeta } from '../../kube/types.ts';

export interface ImagePullJob extends KubeObject {
  readonly apiVersion: string;
  readonly kind: 'ImagePullJob';
  readonly metadata: ObjectMeta;
  readonly spec: {
    readonly image: string;
    readonly pullSecrets?: readonly string[];
    readonly podSelector: LabelSelector;
    readonly parallelism: IntOrString;
    readonly pullPolicy: { readonly backoffLimit: number; readonly timeoutSeconds: number };
    readonly completionPolicy: { readonly type: 'Always'; readonly ttlSecondsAfterFinished: number };
    readonly sandboxConfig: { readonly annotations?: Readonly<Record<string, string>>; readonly labels?: Readonly<Record<string, string>> };
  };
}
