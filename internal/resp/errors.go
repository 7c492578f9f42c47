package resp

import "errors"

var (
	// ErrProtocol is what every *ProtocolError is (errors.Is): input that
	// breaks RESP or one of the Reader's limits.
	ErrProtocol = errors.New("protocol error")
	// ErrBusy is returned when a command needs more memory than the
	// Reader's Budget can give now. Retrying later may succeed.
	ErrBusy = errors.New("bytes in flight at their limit")
)

// ProtocolError is input the Reader cannot frame: a malformed command or
// one over a limit. Msg is worded as Redis words it after
// "Protocol error: ".
type ProtocolError struct {
	Msg string
}

func (e *ProtocolError) Error() string { return "resp: protocol error: " + e.Msg }

// Is makes every ProtocolError ErrProtocol.
func (e *ProtocolError) Is(target error) bool { return target == ErrProtocol }

// Reply is the error reply Redis gives for e: "ERR Protocol error: " and
// Msg.
func (e *ProtocolError) Reply() string { return "ERR Protocol error: " + e.Msg }
