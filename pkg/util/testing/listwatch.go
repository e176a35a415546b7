package testing

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
)

// ListThenWatch is lw for a unit test's informer: the informer calls lw's
// List and then its Watch, never a streaming list (WatchList), so lw's
// list is all it starts with.
func ListThenWatch(lw *toolscache.ListWatch) toolscache.ListerWatcher { return listThenWatch{lw} }

type listThenWatch struct{ *toolscache.ListWatch }

func (listThenWatch) IsWatchListSemanticsUnSupported() bool { return true }

// Listed lists (a copy of) list, then watches events: a unit test's
// informer over a fixed list and the events the test sends.
func Listed(list runtime.Object, events watch.Interface) toolscache.ListerWatcher {
	return ListThenWatch(&toolscache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return list.DeepCopyObject(), nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return events, nil },
	})
}
