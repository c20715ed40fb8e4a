package main

// --apply: load manifests and put them into the cluster. CRDs go first and
// must be Established before objects of their kinds can be mapped and stored.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

const fieldManager = "nodehook-testcluster"

var (
	crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	nsGVR  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// readManifests decodes every YAML or JSON document of every file, in order.
func readManifests(files []string) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
		for {
			var m map[string]interface{}
			err := dec.Decode(&m)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			if len(m) == 0 { // empty document, e.g. a trailing "---"
				continue
			}
			obj := &unstructured.Unstructured{Object: m}
			if obj.GetKind() == "" || obj.GetAPIVersion() == "" {
				f.Close()
				return nil, fmt.Errorf("%s: document without apiVersion/kind", name)
			}
			objs = append(objs, obj)
		}
		f.Close()
	}
	return objs, nil
}

func applyManifests(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured) error {
	if len(objs) == 0 {
		return nil
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	cached := memory.NewMemCacheClient(disc)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(cached)

	var others []*unstructured.Unstructured
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		if gvk.Group != crdGVR.Group || gvk.Kind != "CustomResourceDefinition" {
			others = append(others, o)
			continue
		}
		logf("applying CustomResourceDefinition %s", o.GetName())
		if err := apply(ctx, dyn.Resource(crdGVR), o); err != nil {
			return err
		}
		if err := waitEstablished(ctx, dyn.Resource(crdGVR), o.GetName()); err != nil {
			return err
		}
	}

	for _, o := range others {
		gvk := o.GroupVersionKind()
		// Discovery of a just-established CRD can lag a moment behind its
		// condition, so a kind that is not known yet triggers a refresh.
		var m *meta.RESTMapping
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
			var err error
			m, err = mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			if meta.IsNoMatchError(err) {
				mapper.Reset()
				return false, nil
			}
			return err == nil, err
		})
		if err != nil {
			return fmt.Errorf("no resource for %s: %w", gvk, err)
		}
		logf("applying %s %s", gvk.Kind, nsName(o))
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			if o.GetNamespace() == "" {
				o.SetNamespace("default")
			}
			if err := ensureNamespace(ctx, dyn, o.GetNamespace()); err != nil {
				return err
			}
			ri = dyn.Resource(m.Resource).Namespace(o.GetNamespace())
		}
		if err := apply(ctx, ri, o); err != nil {
			return err
		}
	}
	return nil
}

// apply creates the object or updates the fields it names (server-side
// apply with force). A "status" in the manifest is applied to the status
// subresource too, so tests can seed status.
func apply(ctx context.Context, ri dynamic.ResourceInterface, o *unstructured.Unstructured) error {
	if o.GetName() == "" && o.GetGenerateName() != "" {
		_, err := ri.Create(ctx, o, metav1.CreateOptions{FieldManager: fieldManager})
		return wrap(o, err)
	}
	opts := metav1.ApplyOptions{FieldManager: fieldManager, Force: true}
	if _, err := ri.Apply(ctx, o.GetName(), o, opts); err != nil {
		return wrap(o, err)
	}
	if _, ok := o.Object["status"]; ok {
		_, err := ri.ApplyStatus(ctx, o.GetName(), o, opts)
		if err != nil && !apierrors.IsNotFound(err) { // NotFound: no status subresource
			return wrap(o, err)
		}
	}
	return nil
}

// waitCustomResourcesServed waits until every served version of every CRD
// in the cluster can be listed. Right after a restart (or a new CRD) the watch
// cache of a custom resource answers 429 "storage is (re)initializing" for a
// moment; built-in resources are covered by /readyz, CRDs are not.
// stuck is called once for a resource still not served halfway through its wait.
func waitCustomResourcesServed(ctx context.Context, cfg *rest.Config, stuck func(gvr schema.GroupVersionResource)) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	crds, err := dyn.Resource(crdGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, crd := range crds.Items {
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
		versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
		for _, v := range versions {
			v, _ := v.(map[string]interface{})
			name, _ := v["name"].(string)
			if served, _ := v["served"].(bool); !served {
				continue
			}
			gvr := schema.GroupVersionResource{Group: group, Version: name, Resource: plural}
			// What the server is doing while one request hangs is what explains it; once the
			// wait has failed, that request is gone.
			halfway := time.AfterFunc(30*time.Second, func() { stuck(gvr) })
			// resourceVersion "0" is answered from the watch cache.
			err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
				_, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{ResourceVersion: "0", Limit: 1})
				return err == nil, nil
			})
			halfway.Stop()
			if err != nil {
				return fmt.Errorf("%s not served: %w", gvr, err)
			}
		}
	}
	return nil
}

func waitEstablished(ctx context.Context, ri dynamic.ResourceInterface, name string) error {
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		crd, err := ri.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
		for _, c := range conds {
			c, _ := c.(map[string]interface{})
			if c["type"] == "Established" && c["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("CustomResourceDefinition %s not established: %w", name, err)
	}
	return nil
}

func ensureNamespace(ctx context.Context, dyn dynamic.Interface, name string) error {
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(name)
	_, err := dyn.Resource(nsGVR).Create(ctx, ns, metav1.CreateOptions{FieldManager: fieldManager})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
}

func nsName(o *unstructured.Unstructured) string {
	if o.GetNamespace() != "" {
		return o.GetNamespace() + "/" + o.GetName()
	}
	return o.GetName()
}

func wrap(o *unstructured.Unstructured, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("applying %s %s: %w", o.GetKind(), nsName(o), err)
}
