package main

// One net.Listener over several: the API server takes a single listener, and
// real-node.sh needs it on loopback (for the host's clients) and on the host
// end of the nodes' veth bridge (for kubelets and pods in their network
// namespaces), on the same port.

import (
	"errors"
	"net"
	"strconv"
	"sync"
)

type multiListener struct {
	listeners []net.Listener
	conns     chan net.Conn
	errs      chan error
	closeOnce sync.Once
	closed    chan struct{}
}

// listenAll binds port on every address (port 0: a free port chosen on the
// first address, then the same one on the others).
func listenAll(addrs []string, port int) (net.Listener, error) {
	m := &multiListener{conns: make(chan net.Conn), errs: make(chan error, len(addrs)), closed: make(chan struct{})}
	for _, a := range addrs {
		l, err := net.Listen("tcp", net.JoinHostPort(a, strconv.Itoa(port)))
		if err != nil {
			m.Close()
			return nil, err
		}
		port = l.Addr().(*net.TCPAddr).Port
		m.listeners = append(m.listeners, l)
	}
	if len(m.listeners) == 1 {
		return m.listeners[0], nil
	}
	for _, l := range m.listeners {
		go m.accept(l)
	}
	return m, nil
}

func (m *multiListener) accept(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			select {
			case m.errs <- err:
			case <-m.closed:
			}
			return
		}
		select {
		case m.conns <- c:
		case <-m.closed:
			c.Close()
			return
		}
	}
}

func (m *multiListener) Accept() (net.Conn, error) {
	select {
	case c := <-m.conns:
		return c, nil
	case err := <-m.errs:
		return nil, err
	case <-m.closed:
		return nil, net.ErrClosed
	}
}

func (m *multiListener) Close() error {
	var errs []error
	m.closeOnce.Do(func() {
		close(m.closed)
		for _, l := range m.listeners {
			errs = append(errs, l.Close())
		}
	})
	return errors.Join(errs...)
}

// Addr is the loopback address, the first one.
func (m *multiListener) Addr() net.Addr { return m.listeners[0].Addr() }
