/* The pod sandbox's process for test/cluster/real-node.sh (containerd's sandbox_image): it holds
 * the pod's namespaces, reaps what is reparented to it, and exits on SIGINT/SIGTERM. The nodes
 * reach no registry, so the upstream pause image is replaced by this one (build-image.sh pause). */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int sig) { (void)sig; _exit(0); }

static void reap(int sig) {
  (void)sig;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(void) {
  signal(SIGINT, stop);
  signal(SIGTERM, stop);
  signal(SIGCHLD, reap);
  for (;;) pause();
}
