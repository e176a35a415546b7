package testing

import toolscache "k8s.io/client-go/tools/cache"

// ListThenWatch is lw for a unit test's informer: the informer calls lw's
// List and then its Watch, never a streaming list (WatchList), so lw's
// list is all it starts with.
func ListThenWatch(lw *toolscache.ListWatch) toolscache.ListerWatcher { return listThenWatch{lw} }

type listThenWatch struct{ *toolscache.ListWatch }

func (listThenWatch) IsWatchListSemanticsUnSupported() bool { return true }
