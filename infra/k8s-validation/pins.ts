/**
 * Everything the offline manifest validator downloads, pinned. A hash that does not match fails the
 * set-up (nothing is cached); changing any value here makes the next run build a fresh cache entry.
 */

/** A Go program built from the Go module proxy with `go install`; `moduleSum` is Go's own `h1:` hash. */
export interface GoToolPin {
  name: 'kubeconform' | 'kustomize';
  module: string;
  packagePath: string;
  version: string;
  moduleSum: string;
}

export const KUBECONFORM: GoToolPin = {
  name: 'kubeconform',
  module: 'github.com/yannh/kubeconform',
  packagePath: 'github.com/yannh/kubeconform/cmd/kubeconform',
  // v0.7.0 and kustomize v5.8.1 build with Go 1.24+; later releases need a newer Go than some machines have.
  version: 'v0.7.0',
  moduleSum: 'h1:ZFfniR8VChrWQxaxTUGnNrxw8RIDkjVBrjdhXSamwjw=',
};

export const KUSTOMIZE: GoToolPin = {
  name: 'kustomize',
  module: 'sigs.k8s.io/kustomize/kustomize/v5',
  packagePath: 'sigs.k8s.io/kustomize/kustomize/v5',
  version: 'v5.8.1',
  moduleSum: 'h1:Pgsg5psubpVEy7Nf6S89PARg5VmmWUC1l9dC6Dl4PG0=',
};

/**
 * Kubernetes' own API schemas as JSON Schema, from the PyPI wheel of kubernetes-validate, which ships
 * a strict variant (additionalProperties: false on every object) per Kubernetes minor release.
 */
export const KUBERNETES_SCHEMAS = {
  pypiPackage: 'kubernetes-validate',
  packageVersion: '1.37.0',
  wheelFile: 'kubernetes_validate-1.37.0-py3-none-any.whl',
  wheelSha256: '85136d018a27b50ec7fc049d902bfa5193f5976807e6c0f408e3ab6fe078cad9',
  /** The newest Kubernetes release the wheel covers; manifests are checked against this API. */
  kubernetesVersion: '1.37.0',
} as const;

/** A Go module whose source tree holds an operator's CustomResourceDefinitions as YAML. */
export interface CrdModulePin {
  operator: string;
  module: string;
  version: string;
  moduleSum: string;
  /** SHA-256 of the module zip as the Go module proxy serves it. */
  zipSha256: string;
  /** Files or directories (every *.yaml inside) relative to the module root. */
  crdPaths: readonly string[];
}

export const CRD_MODULES: readonly CrdModulePin[] = [
  {
    operator: 'ECK (Elastic Cloud on Kubernetes)',
    module: 'github.com/elastic/cloud-on-k8s/v3',
    version: 'v3.5.0',
    moduleSum: 'h1:sR4oj+gNnwI9hgsKhBwjUlx+5F2T/kND40hrzaogtek=',
    zipSha256: 'a52a4b306f7d08f70fc93ac6cca1c1cfc8fb2faef1ceae80ec95a8a099d02809',
    // The released bundle: the generated CRDs with ECK's patches applied (pod templates left open).
    crdPaths: ['config/crds/v1/all-crds.yaml'],
  },
  {
    operator: 'KEDA',
    module: 'github.com/kedacore/keda/v2',
    version: 'v2.21.0',
    moduleSum: 'h1:R6z2HZvstK4RLUMxroNACzBj74xGxt3kG59b5Xc+Xps=',
    zipSha256: '74b59fe16144250748b716d6dc8789dee52d26164daab732145bed60456013a4',
    crdPaths: ['config/crd/bases'],
  },
  {
    operator: 'prometheus-operator',
    module: 'github.com/prometheus-operator/prometheus-operator',
    version: 'v0.85.0',
    moduleSum: 'h1:M5xLCLEoaW2IJfnuCwFzzpL+jSVQu3KGT84Pye+fW8s=',
    zipSha256: '0bdb88ed823d0f2e86cf909638439b6ad1da744a228172c7411d9987527dc5d1',
    crdPaths: ['example/prometheus-operator-crd'],
  },
];

/**
 * Strimzi is not served by the Go module proxy (its tags lack the `v` prefix), and its CRD YAMLs are
 * in no registry. Strimzi generates them from the annotated model classes of its `api` jar with its
 * own crd-generator, so that is done here from Maven Central: the 0.47.0 model (the last line with
 * Kafka 3.9) with the newest generator that runs on Java 17 (0.45.0; 1.x needs Java 21). That
 * generator predates the CEL rules (x-kubernetes-validations) 0.47 added, which a JSON Schema
 * validator could not evaluate anyway; everything else comes from the 0.47.0 model.
 */
export const STRIMZI = {
  apiVersion: '0.47.0',
  generatorMainClass: 'io.strimzi.crdgenerator.CrdGenerator',
  /** The generator's classpath: the Maven runtime closure, less the jars it never loads. */
  jars: [
    {
      coordinates: 'io.strimzi:api:0.47.0',
      sha256: 'c427ed450607d16599ae61ab8f6603948d2a0b0fedd5791da8ecd57c55446828',
    },
    {
      coordinates: 'io.strimzi:crd-generator:0.45.0',
      sha256: 'f03aab1b83d29bbd340ce484a4bb651faac7685c685865a30351a636da6008ea',
    },
    {
      coordinates: 'io.strimzi:crd-annotations:0.45.0',
      sha256: 'a0f4e6cf97f07a64665397b5202e12ef1a5fd76d36f5c089eb085759b1cf2cce',
    },
    {
      coordinates: 'com.fasterxml.jackson.core:jackson-annotations:2.18.3',
      sha256: '8aa5740d80b5a5025508b41bbadbaa1fb3772267c628b2e30681a4f45f8b8931',
    },
    {
      coordinates: 'com.fasterxml.jackson.core:jackson-core:2.19.0',
      sha256: 'da8e859bac94874528116a25f20c68560e4287acbf27628711b8a4f96b028430',
    },
    {
      coordinates: 'com.fasterxml.jackson.core:jackson-databind:2.18.3',
      sha256: '510bdda75a7a6186c5bf33b851239488a1450906ae5757121f2e1cc48a7e108f',
    },
    {
      coordinates: 'com.fasterxml.jackson.dataformat:jackson-dataformat-yaml:2.16.2',
      sha256: 'df33f4dd29f975600d3ac2e7c891ef7a9bce33f0715680df479c63a44ddc8fa9',
    },
    {
      coordinates: 'org.yaml:snakeyaml:2.2',
      sha256: '1467931448a0817696ae2805b7b8b20bfb082652bf9c4efaed528930dc49389b',
    },
    {
      coordinates: 'io.fabric8:kubernetes-model-core:7.3.1',
      sha256: '89e497f907ac3d7994e1bbad33151e2544a96fa545d0c9185307cbe000193854',
    },
    {
      coordinates: 'io.fabric8:kubernetes-model-common:7.3.1',
      sha256: '6e945f2e1dcfc327bb9f35a825ce25cd3ea208cbf6b7f6b8fcad4e693fe428b0',
    },
    {
      coordinates: 'io.fabric8:kubernetes-model-apiextensions:7.3.1',
      sha256: '85b4ebbadb6584f0ae70288c56758476fd8342adca527633bc386842c732cb46',
    },
    {
      coordinates: 'io.fabric8:kubernetes-model-networking:7.3.1',
      sha256: '33334d66f672c52b0e957ef920b7a54b773d86c5fd5c1c707196afbb192b4783',
    },
  ],
  /**
   * The generator runs of Strimzi's api/pom.xml for 0.47.0: KafkaTopic and KafkaUser keep their old
   * versions served; every other kind has only v1beta2.
   */
  runs: [
    {
      apiVersions: 'v1beta2',
      classes: [
        'kafka.Kafka',
        'connect.KafkaConnect',
        'podset.StrimziPodSet',
        'nodepool.KafkaNodePool',
        'bridge.KafkaBridge',
        'connector.KafkaConnector',
        'mirrormaker2.KafkaMirrorMaker2',
        'rebalance.KafkaRebalance',
      ],
    },
    { apiVersions: 'v1alpha1,v1beta1,v1beta2', classes: ['topic.KafkaTopic', 'user.KafkaUser'] },
  ],
} as const;
