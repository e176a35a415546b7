package kubelet

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
)

// Options configure the simulated kubelets.
type Options struct {
	Nodes NodeSpec
	// PodReadyDelay is how long a bound pod takes to become Running and Ready.
	PodReadyDelay time.Duration
	// JobPodRunTime is how long a pod a Job owns runs before it exits 0
	// (Succeeded); 0 means it runs until deleted like any other.
	JobPodRunTime time.Duration
	// Workers bounds concurrent pod status writes.
	Workers int
	Clock   clock.Clock
}

// Kubelet runs the simulated kubelets of one member cluster.
type Kubelet struct {
	opts    Options
	client  kubernetes.Interface
	pods    listersv1.PodLister
	synced  cache.InformerSynced
	factory informers.SharedInformerFactory
	queue   workqueue.TypedRateLimitingInterface[types.NamespacedName]
	ips     *ipAllocator
	// firstSeen records when a pod was first seen bound, for the ready delay.
	mu        sync.Mutex
	firstSeen map[types.UID]time.Time
}

// New prepares the kubelets. Call Run to start them.
func New(client kubernetes.Interface, opts Options) *Kubelet {
	if opts.Workers == 0 {
		opts.Workers = 8
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	// Only pods bound to a node are the kubelets' business.
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = "spec.nodeName!=" }))
	podInformer := factory.Core().V1().Pods()
	k := &Kubelet{
		opts:      opts,
		client:    client,
		pods:      podInformer.Lister(),
		synced:    podInformer.Informer().HasSynced,
		factory:   factory,
		queue:     workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName]()),
		ips:       newIPAllocator(),
		firstSeen: map[types.UID]time.Time{},
	}
	_, _ = podInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    k.enqueue,
		UpdateFunc: func(_, obj any) { k.enqueue(obj) },
		DeleteFunc: k.forget,
	})
	return k
}

// Pods lists the bound pods the kubelets know, for other simulator parts
// (the metrics server, the world reporter).
func (k *Kubelet) Pods() listersv1.PodLister { return k.pods }

// Run registers the nodes, then serves until ctx ends.
func (k *Kubelet) Run(ctx context.Context) error {
	if err := ensureNodes(ctx, k.client, k.opts.Nodes); err != nil {
		return err
	}
	go heartbeat(ctx, k.client, k.opts.Nodes)
	k.factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), k.synced) {
		return fmt.Errorf("pod cache did not sync")
	}
	// Pods that already have IPs (from before a restart) keep them.
	pods, _ := k.pods.List(everything)
	for _, p := range pods {
		k.ips.claim(p.Spec.NodeName, p.Status.PodIP, p.UID)
	}
	var wg sync.WaitGroup
	for i := 0; i < k.opts.Workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k.processNext(ctx) {
			}
		}()
	}
	<-ctx.Done()
	k.queue.ShutDown()
	wg.Wait()
	return nil
}

// WaitForSync blocks until the pod cache has synced.
func (k *Kubelet) WaitForSync(ctx context.Context) bool {
	return cache.WaitForCacheSync(ctx.Done(), k.synced)
}

func (k *Kubelet) enqueue(obj any) {
	if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
		ns, name, _ := cache.SplitMetaNamespaceKey(key)
		k.queue.Add(types.NamespacedName{Namespace: ns, Name: name})
	}
}

func (k *Kubelet) forget(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	k.ips.release(pod.Spec.NodeName, pod.UID)
	k.mu.Lock()
	delete(k.firstSeen, pod.UID)
	k.mu.Unlock()
}

func (k *Kubelet) processNext(ctx context.Context) bool {
	key, quit := k.queue.Get()
	if quit {
		return false
	}
	defer k.queue.Done(key)
	requeueAfter, err := k.sync(ctx, key)
	switch {
	case err != nil:
		klog.FromContext(ctx).V(1).Info("Syncing pod failed", "pod", key, "err", err)
		k.queue.AddRateLimited(key)
	case requeueAfter > 0:
		k.queue.Forget(key)
		k.queue.AddAfter(key, requeueAfter)
	default:
		k.queue.Forget(key)
	}
	return true
}

// sync moves one pod along its life: delete it when it is terminating,
// start it when its ready delay has passed.
func (k *Kubelet) sync(ctx context.Context, key types.NamespacedName) (time.Duration, error) {
	pod, err := k.pods.Pods(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if !k.ownsNode(pod.Spec.NodeName) {
		return 0, nil
	}
	if pod.DeletionTimestamp != nil {
		// Containers "stop" at once; finish the graceful deletion the way the
		// kubelet does, with a zero grace period and the pod's UID as
		// precondition so a recreated pod of the same name is not touched.
		err := k.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
			GracePeriodSeconds: ptr.To[int64](0),
			Preconditions:      &metav1.Preconditions{UID: &pod.UID},
		})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return 0, nil
		}
		return 0, err
	}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return 0, nil
	}
	now := k.opts.Clock.Now()
	if pod.Status.Phase == corev1.PodRunning {
		return k.finishJobPod(ctx, pod, now)
	}
	if image, ok := unpullableImage(pod); ok {
		return 0, k.failPull(ctx, pod, image, now)
	}
	k.mu.Lock()
	seen, ok := k.firstSeen[pod.UID]
	if !ok {
		seen = now
		k.firstSeen[pod.UID] = now
	}
	k.mu.Unlock()
	if wait := seen.Add(k.opts.PodReadyDelay).Sub(now); wait > 0 {
		return wait, nil
	}
	return 0, k.start(ctx, pod, now)
}

func (k *Kubelet) ownsNode(name string) bool {
	for i := 0; i < k.opts.Nodes.Count; i++ {
		if k.opts.Nodes.NodeName(i) == name {
			return true
		}
	}
	return false
}

// start reports the pod Running and Ready with an IP, as a kubelet does once
// its containers run and pass their readiness probes.
func (k *Kubelet) start(ctx context.Context, pod *corev1.Pod, now time.Time) error {
	ip, err := k.ips.assign(pod.Spec.NodeName, k.nodeIndex(pod.Spec.NodeName), pod.UID)
	if err != nil {
		return err
	}
	t := metav1.NewTime(now)
	pod = pod.DeepCopy()
	pod.Status.Phase = corev1.PodRunning
	pod.Status.HostIP = nodeIP(k.nodeIndex(pod.Spec.NodeName))
	pod.Status.HostIPs = []corev1.HostIP{{IP: pod.Status.HostIP}}
	pod.Status.PodIP = ip
	pod.Status.PodIPs = []corev1.PodIP{{IP: ip}}
	pod.Status.StartTime = &t
	pod.Status.QOSClass = qosClass(pod)
	for _, c := range []corev1.PodConditionType{corev1.PodInitialized, corev1.PodReadyToStartContainers, corev1.ContainersReady, corev1.PodReady, corev1.PodScheduled} {
		setCondition(&pod.Status, c, t)
	}
	pod.Status.ContainerStatuses = nil
	for _, c := range pod.Spec.Containers {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
			Name:        c.Name,
			Image:       c.Image,
			ImageID:     "sim://" + c.Image,
			ContainerID: fmt.Sprintf("sim://%s-%s", pod.UID, c.Name),
			Ready:       true,
			Started:     ptr.To(true),
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: t}},
		})
	}
	_, err = k.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func (k *Kubelet) nodeIndex(name string) int {
	for i := 0; i < k.opts.Nodes.Count; i++ {
		if k.opts.Nodes.NodeName(i) == name {
			return i
		}
	}
	return 0
}

func setCondition(st *corev1.PodStatus, t corev1.PodConditionType, now metav1.Time) {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			if st.Conditions[i].Status != corev1.ConditionTrue {
				st.Conditions[i].Status = corev1.ConditionTrue
				st.Conditions[i].LastTransitionTime = now
				st.Conditions[i].Reason, st.Conditions[i].Message = "", ""
			}
			return
		}
	}
	st.Conditions = append(st.Conditions, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now})
}

func qosClass(pod *corev1.Pod) corev1.PodQOSClass {
	requests, limits := false, true
	for _, c := range pod.Spec.Containers {
		if len(c.Resources.Requests) > 0 || len(c.Resources.Limits) > 0 {
			requests = true
		}
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			l, ok := c.Resources.Limits[r]
			q, hasReq := c.Resources.Requests[r]
			if !ok || (hasReq && q.Cmp(l) != 0) {
				limits = false
			}
		}
	}
	switch {
	case !requests:
		return corev1.PodQOSBestEffort
	case limits:
		return corev1.PodQOSGuaranteed
	default:
		return corev1.PodQOSBurstable
	}
}

// ipAllocator hands out pod IPs from each node's /24.
type ipAllocator struct {
	mu    sync.Mutex
	inUse map[string]map[string]types.UID // node -> ip -> pod
	byPod map[types.UID]string
}

func newIPAllocator() *ipAllocator {
	return &ipAllocator{inUse: map[string]map[string]types.UID{}, byPod: map[types.UID]string{}}
}

func (a *ipAllocator) claim(node, ip string, uid types.UID) {
	if ip == "" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.inUse[node] == nil {
		a.inUse[node] = map[string]types.UID{}
	}
	a.inUse[node][ip] = uid
	a.byPod[uid] = ip
}

func (a *ipAllocator) assign(node string, index int, uid types.UID) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ip, ok := a.byPod[uid]; ok {
		return ip, nil
	}
	prefix := netip.MustParsePrefix(podCIDR(index))
	if a.inUse[node] == nil {
		a.inUse[node] = map[string]types.UID{}
	}
	for addr := prefix.Addr().Next().Next(); prefix.Contains(addr); addr = addr.Next() {
		ip := addr.String()
		if _, taken := a.inUse[node][ip]; !taken && addr.As4()[3] != 255 {
			a.inUse[node][ip] = uid
			a.byPod[uid] = ip
			return ip, nil
		}
	}
	return "", fmt.Errorf("node %s has no free pod IP in %s", node, prefix)
}

func (a *ipAllocator) release(node string, uid types.UID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ip, ok := a.byPod[uid]; ok {
		delete(a.inUse[node], ip)
		delete(a.byPod, uid)
	}
}
