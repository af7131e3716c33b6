package reference

// The stage of a receive (README 6.1, "A receive of a point-to-point
// message"): a recv that was a receiver's first sign takes the phase of
// the send it pairs with, when the sender's side of the message was read
// and sent the value. Only single messages (send/isend with recv/irecv)
// pair so; a batch_isend_irecv entry holds both directions.

// singleMessage is the one side of a send, isend, recv or irecv entry.
func singleMessage(e *entry) *collSide {
	if e == nil || e.coll == nil || len(e.coll.sides) != 1 {
		return nil
	}
	if spec, ok := specOf(e.coll.api); !ok || spec.batch || spec.p2p == 0 {
		return nil
	}
	if s := e.coll.sides[0]; s.clock.kind == keyP2P && s.clock.from >= 0 && s.clock.to >= 0 {
		return s
	}
	return nil
}

// stageReceives sets the phase of every recv that is a received first
// sign to its paired send's.
func stageReceives(d *stepData, signs map[int]*sign) {
	for rank, s := range signs {
		if s.role != signReceived {
			continue
		}
		side := singleMessage(s.first)
		if side == nil || side.recv == 0 || side.clock.to != rank {
			continue
		}
		sender := d.read(side.clock.from)
		if sender == nil {
			continue
		}
		ref, ok := sender.instances[side.inst()]
		if !ok {
			continue
		}
		if ss := singleMessage(ref.e); ss != nil && ss.send != 0 && ss.clock.from == side.clock.from {
			s.first.phase = ref.e.phase
		}
	}
}
