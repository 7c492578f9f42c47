//go:build !linux

package respserver

import (
	"errors"
	"net"
)

// evLoop: without epoll, every connection is served by a goroutine.
type evLoop struct{ f *FrontEnd }

type evConn struct{}

func (f *FrontEnd) loopCount() int { return 0 }

func newLoop(f *FrontEnd) (*evLoop, error) {
	return nil, errors.New("respserver: no event loop on this system")
}

func (l *evLoop) adopt(net.Conn) *conn { return nil }
func (l *evLoop) add(*conn)            {}
func (l *evLoop) poke()                {}
func (l *evLoop) closeAll()            {}
func (l *evLoop) run()                 { l.f.wg.Done() }
func (l *evLoop) discard(*conn)        {}
