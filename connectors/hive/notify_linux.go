package hive

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"golang.org/x/sys/unix"
)

// inotify is the Linux notifier. Its descriptor is non-blocking, so
// drain returns as soon as the queue is empty. Read and open events are
// not asked for: the scans' own reads must not look like changes.
type inotify struct {
	fd  int
	buf []byte
}

// fileMask is every event that changes a file: written, truncated or
// closed after writing (through any of its links: the watch is on the
// file itself), its times, mode or link count changed, the file removed
// or moved. folderMask adds entries created, removed or renamed.
const (
	fileMask = unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_ATTRIB |
		unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_DONT_FOLLOW
	folderMask = fileMask | unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_ONLYDIR
)

func openNotifier() (notifier, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return &inotify{fd: fd, buf: make([]byte, 64<<10)}, nil
}

func (n *inotify) add(path string, folder bool) (int32, error) {
	mask := uint32(fileMask)
	if folder {
		if !localFileSystem(path) {
			return 0, fmt.Errorf("%s is not on a local file system", path)
		}
		mask = folderMask
	}
	wd, err := unix.InotifyAddWatch(n.fd, path, mask)
	return int32(wd), err
}

func (n *inotify) drain(event func(wd int32, ended, overflow bool)) error {
	for {
		k, err := unix.Read(n.fd, n.buf)
		if errors.Is(err, unix.EAGAIN) {
			return nil
		}
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		for off := 0; off+unix.SizeofInotifyEvent <= k; {
			wd := int32(binary.NativeEndian.Uint32(n.buf[off:]))
			mask := binary.NativeEndian.Uint32(n.buf[off+4:])
			size := binary.NativeEndian.Uint32(n.buf[off+12:])
			event(wd, mask&unix.IN_IGNORED != 0, mask&unix.IN_Q_OVERFLOW != 0)
			off += unix.SizeofInotifyEvent + int(size)
		}
	}
}

func (n *inotify) close() { unix.Close(n.fd) }

// localFileSystem reports whether dir is on a file system whose every
// change is made through this kernel, so its events are complete. A
// network file system (NFS, SMB, FUSE) changes without this kernel
// knowing, and an overlay's lower layers may change beneath it.
func localFileSystem(dir string) bool {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return false
	}
	switch uint32(st.Type) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC, unix.F2FS_SUPER_MAGIC:
		return true
	}
	return false
}

// fileIdentity returns the device, inode and link count of a listed file
// or folder.
func fileIdentity(fi fs.FileInfo) (dev, ino, links uint64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, 0, false
	}
	return uint64(st.Dev), uint64(st.Ino), uint64(st.Nlink), true
}
