package repro

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// What repro checks in a tensor file before it copies it, without loading
// it: that repro.py can load it the safe way, torch.load(weights_only=True)
// for a torch.save file, numpy.load(allow_pickle=False) for a .npy file.

// isNpy reports whether a tensor file is a NumPy .npy file (MindSpore's
// format), which repro.py loads with numpy; any other name is loaded with
// torch.load. repro.py.tmpl decides the same way.
func isNpy(name string) bool {
	return len(name) >= 4 && strings.EqualFold(name[len(name)-4:], ".npy")
}

// checkTensorFile reads the start of a tensor file and refuses it when
// loading it would unpickle anything but a tensor's parts.
func checkTensorFile(r io.Reader, name string) error {
	br := bufio.NewReader(r)
	if isNpy(name) {
		return checkNpy(br)
	}
	return checkTorchSave(br)
}

// checkTorchSave checks a file torch.save wrote: a zip archive whose first
// record is data.pkl (torch 1.6 on), or the pickles of the legacy format.
// The pickles are read, never run: every callable they name must be one
// torch's weights-only loader accepts.
func checkTorchSave(r *bufio.Reader) error {
	head, err := r.Peek(4)
	switch {
	case len(head) >= 4 && string(head) == "PK\x03\x04":
		if err := skipZipHeader(r); err != nil {
			return err
		}
		if err := scanPickle(r); err != nil {
			return fmt.Errorf("data.pkl: %w", err)
		}
		return nil
	case len(head) >= 1 && head[0] == 0x80:
		// the legacy format: magic number, protocol, system info, the
		// object, the storage keys, then raw storage bytes
		for i := 0; i < 5; i++ {
			if err := scanPickle(r); err != nil {
				return fmt.Errorf("pickle %d of the legacy torch.save format: %w", i+1, err)
			}
		}
		return nil
	case errors.Is(err, io.EOF) && len(head) == 0:
		return errors.New("the file is empty: not a file torch.save writes")
	}
	return errors.New("neither a zip archive nor a pickle: not a file torch.save writes")
}

// skipZipHeader reads the local header of a zip archive's first record,
// which torch.save makes data.pkl, stored uncompressed; r is left at its
// data.
func skipZipHeader(r *bufio.Reader) error {
	var h [30]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return fmt.Errorf("a zip archive cut in its first header: %w", io.ErrUnexpectedEOF)
	}
	flags := binary.LittleEndian.Uint16(h[6:])
	method := binary.LittleEndian.Uint16(h[8:])
	nameLen := int(binary.LittleEndian.Uint16(h[26:]))
	extraLen := int64(binary.LittleEndian.Uint16(h[28:]))
	name := make([]byte, nameLen)
	if _, err := io.ReadFull(r, name); err != nil {
		return fmt.Errorf("a zip archive cut in its first header: %w", io.ErrUnexpectedEOF)
	}
	if string(name) != "data.pkl" && !bytes.HasSuffix(name, []byte("/data.pkl")) {
		return fmt.Errorf("a zip archive whose first record is %q, not data.pkl: not a file torch.save writes", printable(string(name)))
	}
	if flags&1 != 0 || method != 0 {
		return errors.New("a zip archive whose data.pkl is compressed or encrypted: not a file torch.save writes")
	}
	if _, err := r.Discard(int(extraLen)); err != nil {
		return fmt.Errorf("a zip archive cut in its first header: %w", io.ErrUnexpectedEOF)
	}
	return nil
}

// maxNpyHeader is the longest .npy header read (numpy itself refuses
// headers over 10000 bytes by default).
const maxNpyHeader = 64 << 10

// checkNpy reads a .npy header and accepts only the dtypes of a plain
// tensor: bool, signed and unsigned integers, floats and complex numbers.
// An object dtype, which numpy can only unpickle, is refused, and so is a
// structured dtype.
func checkNpy(r *bufio.Reader) error {
	var pre [10]byte
	if _, err := io.ReadFull(r, pre[:8]); err != nil || string(pre[:6]) != "\x93NUMPY" {
		return errors.New("no .npy magic (\\x93NUMPY) at its start: not a .npy file")
	}
	var n int
	switch pre[6] {
	case 1:
		if _, err := io.ReadFull(r, pre[8:10]); err != nil {
			return fmt.Errorf("a .npy file cut in its header: %w", io.ErrUnexpectedEOF)
		}
		n = int(binary.LittleEndian.Uint16(pre[8:10]))
	case 2, 3:
		var l [4]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return fmt.Errorf("a .npy file cut in its header: %w", io.ErrUnexpectedEOF)
		}
		n = int(min(binary.LittleEndian.Uint32(l[:]), maxNpyHeader+1))
	default:
		return fmt.Errorf(".npy format version %d.%d, which numpy does not write", pre[6], pre[7])
	}
	if n > maxNpyHeader {
		return fmt.Errorf("a .npy header longer than %d KiB", maxNpyHeader>>10)
	}
	header := make([]byte, n)
	if _, err := io.ReadFull(r, header); err != nil {
		return fmt.Errorf("a .npy file cut in its header: %w", io.ErrUnexpectedEOF)
	}
	return checkNpyDescr(string(header))
}

// npyHeader is a .npy header as numpy writes it: a Python dict literal of
// exactly these keys in this order, padded with spaces to a newline. Any
// other form (another key, one written twice, a key spelled with double
// quotes or split into adjacent literals, which Python's reader all
// accepts) is refused: the dict numpy would read might not be the one
// checked.
var npyHeader = regexp.MustCompile(`^\{'descr': '([^'\\]*)', 'fortran_order': (?:True|False), 'shape': \((?:[0-9]+(?:, [0-9]+)*,?)?\), \} *\n?$`)

// checkNpyDescr checks a .npy header: numpy's own form, whose 'descr' is
// a bool or number type.
func checkNpyDescr(header string) error {
	m := npyHeader.FindStringSubmatch(header)
	if m == nil {
		return errors.New("a .npy header not in the form numpy writes (a structured dtype, another key, or a key written twice): not a tensor's")
	}
	descr := m[1]
	if !npyNumber(descr) {
		if strings.ContainsRune(descr, 'O') {
			return fmt.Errorf("dtype %q in its .npy header, an object array: numpy can only unpickle it, %w", printable(descr), errPickle)
		}
		return fmt.Errorf("dtype %q in its .npy header: not a number type torch can load", printable(descr))
	}
	return nil
}

// npyNumber reports whether a .npy type string is a bool or number type:
// a byte order, a kind (b, i, u, f, c) and a size in bytes.
func npyNumber(descr string) bool {
	if len(descr) < 3 || !strings.ContainsRune("<>|=", rune(descr[0])) || !strings.ContainsRune("biufc", rune(descr[1])) {
		return false
	}
	for _, c := range descr[2:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(descr) <= 5
}
