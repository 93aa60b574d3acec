/* SPDX-License-Identifier: MIT */
/* A small particle simulation to profile: two threads, a few hot functions, one slow one. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N     256
#define STEPS 40

struct particle {
	double x, y, vx, vy;
};

static struct particle cloud[2][N];

static double distance(const struct particle *a, const struct particle *b)
{
	double dx = a->x - b->x, dy = a->y - b->y;
	return sqrt(dx * dx + dy * dy) + 1e-3;
}

static void accelerate(struct particle *p, const struct particle *all)
{
	for (int j = 0; j < N; j++) {
		double d = distance(p, &all[j]);
		p->vx += (all[j].x - p->x) / (d * d * d) * 1e-6;
		p->vy += (all[j].y - p->y) / (d * d * d) * 1e-6;
	}
}

static void move(struct particle *p)
{
	p->x += p->vx;
	p->y += p->vy;
}

static void checkpoint(int step)
{
	/* Stands for writing state to disk: slow, but rare. */
	struct timespec ts = {0, 2000000};
	if (step % 10 == 0)
		nanosleep(&ts, NULL);
}

static void *simulate(void *arg)
{
	struct particle *c = arg;
	for (int s = 0; s < STEPS; s++) {
		for (int i = 0; i < N; i++)
			accelerate(&c[i], c);
		for (int i = 0; i < N; i++)
			move(&c[i]);
		checkpoint(s);
	}
	return NULL;
}

static void seed(struct particle *c, unsigned k)
{
	for (int i = 0; i < N; i++) {
		k = k * 1103515245u + 12345u;
		c[i].x = (double)(k % 1000) / 1000.0;
		k = k * 1103515245u + 12345u;
		c[i].y = (double)(k % 1000) / 1000.0;
		c[i].vx = c[i].vy = 0;
	}
}

int main(void)
{
	pthread_t worker;

	seed(cloud[0], 1);
	seed(cloud[1], 2);
	pthread_create(&worker, NULL, simulate, cloud[1]);
	simulate(cloud[0]);
	pthread_join(worker, NULL);
	printf("particle 0 ended at (%.4f, %.4f)\n", cloud[0][0].x, cloud[0][0].y);
	return 0;
}
