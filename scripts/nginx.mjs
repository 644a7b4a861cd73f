// Throwaway nginx load balancer for cluster tests (Debian's nginx): proxies
// HTTP and WebSocket on 127.0.0.1 to the given upstream ports, round-robin,
// with no stickiness, and moves on to the next upstream when one is down.
//
//   const lb = await startLoadBalancer({ upstreams: [portA, portB] });
//   ... lb.url ...
//   await lb.stop();
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './postgres.mjs';

export function findNginx() {
  for (const candidate of ['/usr/sbin/nginx', '/usr/bin/nginx']) if (existsSync(candidate)) return candidate;
  return null;
}

function config(dir, port, upstreams) {
  return `worker_processes 1;
daemon off;
user root root;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  map $http_upgrade $connection_upgrade { default upgrade; '' close; }
  upstream parley {
${upstreams.map((p) => `    server 127.0.0.1:${p} max_fails=1 fail_timeout=3s;`).join('\n')}
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://parley;
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_connect_timeout 1s;
      proxy_read_timeout 3600s;
      proxy_next_upstream error timeout http_502 http_503;
    }
  }
}
`;
}

function listening(port) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.on('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

export async function startLoadBalancer({ upstreams }) {
  const binary = findNginx();
  if (!binary) throw new Error('No nginx found: install it with `apt-get install nginx` (.ci/run does).');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'parley-nginx-'));
  for (const sub of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(path.join(dir, sub));
  const port = await freePort();
  const confPath = path.join(dir, 'nginx.conf');
  writeFileSync(confPath, config(dir, port, upstreams));
  const child = spawn(binary, ['-c', confPath, '-p', dir], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const killNow = () => {
    if (child.exitCode === null) child.kill('SIGKILL');
  };
  process.on('exit', killNow);
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`nginx exited (${child.exitCode}): ${stderr}`);
    if (await listening(port)) break;
    if (i > 100) {
      killNow();
      throw new Error(`nginx did not listen within 5 s: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    async stop() {
      process.off('exit', killNow);
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGQUIT');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
        killNow();
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
