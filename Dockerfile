# One image for every role of the service; the role is chosen by the command.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
# Without scripts: `prepare` builds the client package, which the service does not need.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund
COPY . .
ENV NODE_ENV=production
ENTRYPOINT ["node", "bin/tqa.js"]
CMD ["start"]
