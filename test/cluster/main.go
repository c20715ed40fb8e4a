// nodehook-testcluster runs a real kube-apiserver (the full one from
// k8s.io/kubernetes, not a fake) on top of an embedded etcd, on loopback
// only, for tests and the demo. See README.md for the CLI contract.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"go.etcd.io/etcd/server/v3/embed"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
	"k8s.io/kubernetes/cmd/kube-apiserver/app/options"
)

// stopping is set once we have begun to shut the server down on purpose.
var stopping atomic.Bool

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "testcluster: "+format+"\n", args...)
}

func main() {
	// Our own flag set: kubernetes packages register flags on the global one.
	fs := flag.NewFlagSet("nodehook-testcluster", flag.ExitOnError)
	dir := fs.String("dir", "", "data directory (etcd data, certificates, kubeconfig); reused if it exists")
	port := fs.Int("port", 0, "API server port on 127.0.0.1 (default: the port of the previous run in --dir, else a free one)")
	var applies, alsoListen stringList
	fs.Var(&applies, "apply", "YAML/JSON manifest file to apply once ready (repeatable, applied in order)")
	fs.Var(&alsoListen, "also-listen", "another local IP address to serve on, same port (repeatable; real-node.sh: the nodes' bridge)")
	withControllers := fs.Bool("with-controller-manager", false,
		"a kube-controller-manager runs beside (real-node.sh): admit pods through the ServiceAccount plugin")
	fs.Parse(os.Args[1:])
	if *dir == "" || fs.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: nodehook-testcluster --dir DIR [--apply FILE]... [--port N] [--also-listen IP]... [--with-controller-manager]")
		os.Exit(2)
	}
	for _, a := range alsoListen {
		if net.ParseIP(a) == nil {
			fmt.Fprintf(os.Stderr, "--also-listen %q: expected an IP address\n", a)
			os.Exit(2)
		}
	}
	opts := serverOptions{alsoListen: alsoListen, withControllers: *withControllers}
	if err := run(*dir, *port, applies, opts); err != nil {
		logf("error: %v", err)
		os.Exit(1)
	}
	logf("stopped")
}

// serverOptions are the flags real-node.sh sets; the defaults are the plain loopback server.
type serverOptions struct {
	alsoListen      []string
	withControllers bool
}

func run(dir string, port int, applies []string, opts serverOptions) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	readyFile := filepath.Join(dir, "ready")
	os.Remove(readyFile) // stale from a run that was killed
	defer os.Remove(readyFile)

	// Signals are caught from the start so that a test stopping us early
	// still gets a clean etcd shutdown.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)

	quietLogs(dir)
	// klog.Fatal (upstream's way to give up) ends the process through this
	// hook. While we stop on purpose (e.g. a second signal during startup)
	// that is still the promised exit 0; otherwise point at the log.
	klog.OsExit = func(code int) {
		if stopping.Load() {
			code = 0
		} else {
			logf("kube-apiserver failed fatally, see %s", filepath.Join(dir, "apiserver.log"))
		}
		os.Exit(code)
	}
	// Bad manifests fail before anything starts.
	objs, err := readManifests(applies)
	if err != nil {
		return err
	}
	p, err := loadOrCreatePKI(filepath.Join(dir, "pki"))
	if err != nil {
		return fmt.Errorf("certificates: %w", err)
	}
	// The port is part of the kubeconfig, so it is remembered in DIR/port.
	portFile := filepath.Join(dir, "port")
	if port == 0 {
		if b, err := os.ReadFile(portFile); err == nil {
			port, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
	}
	// Listening ourselves and handing the listener to the server avoids a
	// race between picking a free port and binding it.
	ln, err := listenAll(append([]string{"127.0.0.1"}, opts.alsoListen...), port)
	if err != nil {
		return fmt.Errorf("API server port: %w", err)
	}
	port = ln.Addr().(*net.TCPAddr).Port
	if err := writeFileAtomic(portFile, []byte(strconv.Itoa(port)+"\n"), 0o644); err != nil {
		return err
	}
	server := fmt.Sprintf("https://127.0.0.1:%d", port)
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := p.writeKubeconfig(kubeconfig, server); err != nil {
		return err
	}

	start := time.Now()
	logf("starting etcd (data in %s)", filepath.Join(dir, "etcd"))
	etcd, err := startEtcd(dir)
	if err != nil {
		return fmt.Errorf("etcd: %w (see %s)", err, filepath.Join(dir, "etcd.log"))
	}
	defer closeEtcd(etcd) // after the API server has stopped (defers run last-in first-out)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logf("starting kube-apiserver on %s (log in %s)", server, filepath.Join(dir, "apiserver.log"))
	serverDone, err := startAPIServer(ctx, ln, p, etcd.Clients[0].Addr().String(), opts)
	if err != nil {
		return fmt.Errorf("kube-apiserver: %w", err)
	}

	// Every step until ready can be interrupted by a signal or a server
	// crash; the watcher cancels readyCtx and reports which one it was.
	readyCtx, readyCancel := context.WithCancel(ctx)
	type abort struct {
		signal    bool
		serverErr error
	}
	aborted := make(chan *abort, 1)
	go func() {
		var a *abort
		select {
		case <-sigs:
			a = &abort{signal: true}
		case err := <-serverDone:
			a = &abort{serverErr: fmt.Errorf("kube-apiserver exited: %v (see %s)", err, filepath.Join(dir, "apiserver.log"))}
		case <-readyCtx.Done():
		}
		readyCancel()
		aborted <- a
	}()

	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err == nil {
		if err = waitReady(readyCtx, cfg); err != nil {
			err = fmt.Errorf("waiting for API server: %w", err)
		}
	}
	if err == nil {
		err = applyManifests(readyCtx, cfg, objs)
	}
	if err == nil {
		err = waitCustomResourcesServed(readyCtx, cfg, func(gvr schema.GroupVersionResource) {
			logf("%s not served after 30s; every goroutine's stack: %s", gvr, dumpGoroutines(dir))
		})
	}
	readyCancel()
	if a := <-aborted; a != nil {
		if a.serverErr != nil {
			return a.serverErr
		}
		logf("signal received before ready, stopping")
		// Upstream treats a post-start hook cancelled half-way as fatal
		// (exit 255), so let the server finish starting before stopping it.
		if cfg == nil || waitStarted(cfg, sigs, serverDone) {
			stop(cancel, serverDone, sigs)
		}
		return nil
	}
	if err != nil {
		stop(cancel, serverDone, sigs)
		return err
	}

	if err := os.WriteFile(readyFile, nil, 0o644); err != nil {
		return err
	}
	logf("ready after %.1fs", time.Since(start).Seconds())
	fmt.Printf("ready kubeconfig=%s server=%s\n", kubeconfig, server)
	os.Stdout.Sync()

	select {
	case <-sigs:
		logf("shutting down")
		os.Remove(readyFile)
		stop(cancel, serverDone, sigs)
		return nil
	case err := <-serverDone:
		return fmt.Errorf("kube-apiserver exited: %v (see %s)", err, filepath.Join(dir, "apiserver.log"))
	}
}

// stop shuts the API server down; etcd is closed afterwards by run's defer.
// A second signal, or a server that does not stop in time, skips the wait.
func stop(cancel func(), serverDone <-chan error, sigs <-chan os.Signal) {
	stopping.Store(true)
	cancel()
	select {
	case err := <-serverDone:
		if err != nil {
			logf("kube-apiserver: %v", err)
		}
	case <-sigs:
	case <-time.After(10 * time.Second):
		logf("kube-apiserver did not stop within 10s")
	}
}

// dumpGoroutines writes every goroutine's stack to DIR/goroutines-<unix time>.txt and returns
// its path (or why it could not).
func dumpGoroutines(dir string) string {
	buf := make([]byte, 64<<20)
	buf = buf[:runtime.Stack(buf, true)]
	path := filepath.Join(dir, fmt.Sprintf("goroutines-%d.txt", time.Now().Unix()))
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		return err.Error()
	}
	return path
}

// quietLogs sends the API server's klog output to DIR/apiserver.log, so
// stderr only carries our progress lines.
func quietLogs(dir string) {
	f, err := os.OpenFile(filepath.Join(dir, "apiserver.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return // keep logging to stderr
	}
	kfs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(kfs)
	kfs.Set("logtostderr", "false")
	kfs.Set("alsologtostderr", "false")
	kfs.Set("stderrthreshold", "4") // above FATAL: nothing to stderr
	kfs.Set("one_output", "true")   // otherwise an error is written once per severity
	kfs.Set("v", "0")
	klog.SetOutput(f)
}

func freeLoopbackURL() (url.URL, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return url.URL{}, err
	}
	defer l.Close()
	return url.URL{Scheme: "http", Host: l.Addr().String()}, nil
}

// startEtcd runs a single-member etcd inside this process. Its ports are
// picked anew on every run; only the API server needs to find it. A port
// taken between picking and binding (parallel tests) gets another try.
func startEtcd(dir string) (e *embed.Etcd, err error) {
	for try := 0; try < 3; try++ {
		if e, err = startEtcdOnce(dir); err == nil || !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	return e, err
}

func startEtcdOnce(dir string) (*embed.Etcd, error) {
	cfg := embed.NewConfig()
	cfg.Name = "nodehook"
	cfg.Dir = filepath.Join(dir, "etcd")
	client, err := freeLoopbackURL()
	if err != nil {
		return nil, err
	}
	peer, err := freeLoopbackURL()
	if err != nil {
		return nil, err
	}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = "warn"
	cfg.LogOutputs = []string{filepath.Join(dir, "etcd.log")}
	// Test data: skip fsync for speed; a clean stop still persists everything.
	cfg.UnsafeNoFsync = true
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, err
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, nil
	case err := <-e.Err():
		e.Close()
		return nil, err
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, errors.New("not ready after 60s")
	}
}

func closeEtcd(e *embed.Etcd) {
	done := make(chan struct{})
	go func() { e.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		logf("etcd did not stop within 5s")
	}
}

// startAPIServer does what `kube-apiserver` main does, but with our listener,
// our context (so we decide when it stops) and generated flags.
func startAPIServer(ctx context.Context, ln net.Listener, p *pki, etcdAddr string, opts serverOptions) (<-chan error, error) {
	s := options.NewServerRunOptions()
	fs := pflag.NewFlagSet("kube-apiserver", pflag.ContinueOnError)
	for _, f := range s.Flags().FlagSets {
		fs.AddFlagSet(f)
	}
	args := []string{
		"--etcd-servers=http://" + etcdAddr,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--tls-cert-file=" + p.certFile,
		"--tls-private-key-file=" + p.keyFile,
		"--client-ca-file=" + p.caFile, // lets tests use client certs signed by DIR/pki/ca.key
		"--token-auth-file=" + p.tokenFile,
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + p.saKeyFile,
		"--service-account-signing-key-file=" + p.saKeyFile,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--authorization-mode=Node,RBAC",
		// As on real clusters (kubeadm and managed ones): privileged pods are a
		// matter of Pod Security admission, not refused outright, so the
		// host-level overlay in deploy/ can be dry-run here.
		"--allow-privileged=true",
		// Endpoints may not hold loopback addresses; there is nothing
		// to reconcile for a single loopback server anyway.
		"--endpoint-reconciler-type=none",
		// Kubelets (real-node.sh) are reached at their node address, never by a
		// host name, which would be looked up in the machine's DNS.
		"--kubelet-preferred-address-types=InternalIP",
		"--cert-dir=" + p.dir,
		"--profiling=false",
	}
	if !opts.withControllers {
		// There is no controller-manager to create "default" service
		// accounts, so pods could never be admitted with this plugin.
		args = append(args, "--disable-admission-plugins=ServiceAccount")
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	s.SecureServing.Listener = ln
	s.SecureServing.BindPort = ln.Addr().(*net.TCPAddr).Port
	if err := s.GenericServerRunOptions.ComponentGlobalsRegistry.Set(); err != nil {
		return nil, err
	}
	// The server's own loopback clients should not log warnings to us.
	rest.SetDefaultWarningHandler(rest.NoWarnings{})

	completed, err := s.Complete(ctx)
	if err != nil {
		return nil, err
	}
	if errs := completed.Validate(); len(errs) != 0 {
		return nil, utilerrors.NewAggregate(errs)
	}
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx, completed) }()
	return done, nil
}

// waitStarted waits until /readyz passes (all post-start hooks done). It
// returns false if the server exited meanwhile; a second signal or 30s
// end the wait early.
func waitStarted(cfg *rest.Config, sigs <-chan os.Signal, serverDone <-chan error) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return true
	}
	for ctx.Err() == nil {
		status := 0
		c.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).StatusCode(&status)
		if status == 200 {
			return true
		}
		select {
		case <-serverDone:
			return false
		case <-sigs:
			return true
		case <-time.After(100 * time.Millisecond):
		}
	}
	return true
}

// waitReady waits for /readyz and for the "default" namespace, which the
// server creates shortly after it starts serving.
func waitReady(ctx context.Context, cfg *rest.Config) error {
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		status := 0
		c.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).StatusCode(&status)
		if status != 200 {
			return false, nil
		}
		_, err := c.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
}
